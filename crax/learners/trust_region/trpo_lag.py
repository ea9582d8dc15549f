"""TRPO-Lag: TRPO on the Lagrangian mix of the advantages, λ by the rule PPO-Lag uses."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import PPOConfig
from crax.learners.rules import ConstraintRule, LagrangianFields, LagrangianRule
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOLagConfig(LagrangianFields, TrustRegionConfig):
    """TRPO-Lag hyperparameters: the trust-region fields plus the multiplier's (:class:`LagrangianFields`)."""


class TRPOLag(TrustRegionPPO):
    """TRPO step on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration (the Lagrangian rule)."""

    name: ClassVar[str] = "trpo-lag"
    Config: ClassVar[type[PPOConfig]] = TRPOLagConfig
    Rule: ClassVar[type[ConstraintRule] | None] = LagrangianRule
    config: TRPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True
