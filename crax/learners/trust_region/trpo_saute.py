"""TRPO-Saute: TRPO on the budget-augmented env (Saute), through the environment hook only (``ppo-saute``'s twin)."""

from __future__ import annotations

import dataclasses

from crax.core.env import Env
from crax.learners.on_policy.family import PPOConfig
from crax.learners.on_policy.ppo_saute import PPOSauteConfig, saute_env
from crax.learners.shared.config import positive_safety_bound
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOSauteConfig(TrustRegionConfig, PPOSauteConfig):
    """TRPO-Saute hyperparameters: the trust-region fields plus ``ppo-saute``'s budget fields."""

    safety_bound: float = positive_safety_bound()
    """Episodic cost budget d (> 0: the Saute budget z is spent in units of d)."""


class TRPOSaute(TrustRegionPPO, name="trpo-saute", config=TRPOSauteConfig):
    """TRPO on :class:`crax.learners.shared.budget_envs.SauteBudget` ``(env)``, as ``ppo-saute`` (OmniSafe's ``TRPOSaute``)."""

    @classmethod
    def wrap_env(cls, env: Env, config: PPOConfig) -> Env:
        return saute_env(env, config, cls.name)
