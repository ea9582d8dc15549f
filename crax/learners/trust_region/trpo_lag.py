"""TRPO-Lag: TRPO on the Lagrangian mix of the advantages, λ by the rule PPO-Lag uses."""

from __future__ import annotations

import dataclasses

from crax.learners.rules import LagrangianFields, LagrangianRule
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOLagConfig(LagrangianFields, TrustRegionConfig):
    """TRPO-Lag hyperparameters: the trust-region fields plus the multiplier's (:class:`LagrangianFields`)."""


class TRPOLag(TrustRegionPPO, name="trpo-lag", config=TRPOLagConfig, rule=LagrangianRule, budgets=True):
    """TRPO step on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration (the Lagrangian rule)."""

