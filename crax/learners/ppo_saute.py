"""PPO-Saute: PPO on the budget-augmented env (Saute), through the environment hook only."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.env import Env, SauteBudget
from crax.learners.base import ConstrainedPPO, PPOConfig


@dataclasses.dataclass(frozen=True)
class PPOSauteConfig(PPOConfig):
    """PPO-Saute hyperparameters: the shared PPO fields plus the budget's (z₀ = 1, SPEC decision 9)."""

    saute_discount: float = 0.99
    """Budget discount γ_b in z ← (z − c/d_γ)/γ_b, d_γ = d (1 − γ_b^T)/((1 − γ_b) T)."""
    saute_penalty: float = -1.0
    """Reward that replaces the task reward while the remaining budget is negative."""
    saute_max_budget: float = 3.0
    """z_max: the observed budget is clip(z, 0, z_max)."""


class PPOSaute(ConstrainedPPO):
    """PPO on :class:`crax.env.SauteBudget` ``(env)``: observation gets clip(z, 0, z_max), reward the penalty while z < 0."""

    name: ClassVar[str] = "ppo-saute"
    Config: ClassVar[type[PPOConfig]] = PPOSauteConfig

    @classmethod
    def wrap_env(cls, env: Env, config: PPOConfig) -> Env:
        assert isinstance(config, PPOSauteConfig)
        return SauteBudget(env, safety_bound=config.safety_bound, discount=config.saute_discount,
                           penalty=config.saute_penalty, max_budget=config.saute_max_budget)
