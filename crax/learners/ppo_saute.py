"""PPO-Saute: PPO on the budget-augmented env (Saute), through the environment hook only."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.env import Env, SauteBudget
from crax.learners.base import ConstrainedPPO, PPOConfig


@dataclasses.dataclass(frozen=True)
class PPOSauteConfig(PPOConfig):
    """PPO-Saute hyperparameters: the shared PPO fields plus the budget's (z₀ = safety_bound)."""

    saute_discount: float = 0.99
    """Budget discount γ_b in z ← (z − c)/γ_b."""
    saute_penalty: float = -1.0
    """Reward that replaces the task reward while the remaining budget is negative."""


class PPOSaute(ConstrainedPPO):
    """PPO on :class:`crax.env.SauteBudget` ``(env)``: observation gets z/z₀, reward the penalty while z < 0."""

    name: ClassVar[str] = "ppo-saute"
    Config: ClassVar[type[PPOConfig]] = PPOSauteConfig

    @classmethod
    def wrap_env(cls, env: Env, config: PPOConfig) -> Env:
        assert isinstance(config, PPOSauteConfig)
        return SauteBudget(env, safety_bound=config.safety_bound, discount=config.saute_discount,
                           penalty=config.saute_penalty)
