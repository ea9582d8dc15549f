"""TRPO-Lag: TRPO on the Lagrangian mix of the advantages, λ by the rule PPO-Lag uses."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.base import PPOConfig
from crax.learners.multipliers import LagrangianFields
from crax.learners.ppo_lag import LagrangianMultiplier
from crax.learners.trust_region import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOLagConfig(LagrangianFields, TrustRegionConfig):
    """TRPO-Lag hyperparameters: the trust-region fields plus the multiplier's (:class:`LagrangianFields`)."""


class TRPOLag(LagrangianMultiplier, TrustRegionPPO):
    """TRPO step on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration (PPO-Lag's hooks)."""

    name: ClassVar[str] = "trpo-lag"
    Config: ClassVar[type[PPOConfig]] = TRPOLagConfig
    config: TRPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True
