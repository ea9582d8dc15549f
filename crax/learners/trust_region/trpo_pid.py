"""TRPO-PID: TRPO on the Lagrangian mix of the advantages, λ by the PID Lagrangian (OmniSafe's ``TRPOPID``)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import PPOConfig
from crax.learners.rules import ConstraintRule, PIDFields, PIDRule
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOPIDConfig(PIDFields, TrustRegionConfig):
    """TRPO-PID hyperparameters: the trust-region fields plus the PID controller's (:class:`PIDFields`,
    whose defaults are TRPOPID.yaml's ``lagrange_cfgs``)."""


class TRPOPID(TrustRegionPPO):
    """TRPO step on (Â_r − λ Â_c)/(1 + λ); λ by :func:`~crax.learners.rules.pid.pid_step` once per
    iteration, before the step (as OmniSafe's ``TRPOPID._update``)."""

    name: ClassVar[str] = "trpo-pid"
    Config: ClassVar[type[PPOConfig]] = TRPOPIDConfig
    Rule: ClassVar[type[ConstraintRule] | None] = PIDRule
    config: TRPOPIDConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True
