"""PPO-Saute: PPO on the budget-augmented env (Saute), through the environment hook only."""

from __future__ import annotations

import dataclasses

from crax.core.env import Env
from crax.core.params import ranged
from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.shared.budget_envs import SauteBudget
from crax.learners.shared.config import positive_safety_bound


@dataclasses.dataclass(frozen=True)
class PPOSauteConfig(PPOConfig):
    """PPO-Saute hyperparameters: the shared PPO fields plus the budget's (z₀ = 1, docs/SPEC.md section 7, decision 55)."""

    safety_bound: float = positive_safety_bound()
    """Episodic cost budget d (> 0: the Saute budget z is spent in units of d)."""
    saute_discount: float = ranged(0.99, gt=0, le=1)
    """Budget discount γ_b in z ← (z − c/d_γ)/γ_b, d_γ = d (1 − γ_b^T)/((1 − γ_b) T)."""
    saute_penalty: float = ranged(-1.0, le=0)
    """Reward that replaces the task reward while the remaining budget is negative."""
    saute_max_budget: float = ranged(3.0, gt=0)
    """z_max: the observed budget is clip(z, 0, z_max)."""


class PPOSaute(ConstrainedPPO, name="ppo-saute", config=PPOSauteConfig):
    """PPO on :class:`crax.learners.shared.budget_envs.SauteBudget` ``(env)``: observation gets clip(z, 0, z_max), reward the penalty while z < 0."""

    @classmethod
    def wrap_env(cls, env: Env, config: PPOConfig) -> Env:
        return saute_env(env, config, cls.name)


def saute_env(env: Env, config: object, learner: str) -> SauteBudget:
    """``env`` wrapped in :class:`SauteBudget` with a Saute learner's budget fields (``ppo-saute``'s and
    ``trpo-saute``'s env hook); ValueError when ``config`` lacks them."""
    if not isinstance(config, PPOSauteConfig):
        raise ValueError(f"learner {learner!r} takes a config with PPOSauteConfig's fields, got {type(config).__qualname__}")
    return SauteBudget(env, safety_bound=config.safety_bound, discount=config.saute_discount,
                       penalty=config.saute_penalty, max_budget=config.saute_max_budget)
