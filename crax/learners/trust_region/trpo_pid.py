"""TRPO-PID: TRPO on the Lagrangian mix of the advantages, λ by the PID Lagrangian (OmniSafe's ``TRPOPID``)."""

from __future__ import annotations

import dataclasses

from crax.learners.rules import PIDFields, PIDRule
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOPIDConfig(PIDFields, TrustRegionConfig):
    """TRPO-PID hyperparameters: the trust-region fields plus the PID controller's (:class:`PIDFields`,
    whose defaults are TRPOPID.yaml's ``lagrange_cfgs``)."""


class TRPOPID(TrustRegionPPO, name="trpo-pid", config=TRPOPIDConfig, rule=PIDRule, budgets=True):
    """TRPO step on (Â_r − λ Â_c)/(1 + λ); λ by :func:`~crax.learners.rules.pid.pid_step` once per
    iteration, before the step (as OmniSafe's ``TRPOPID._update``)."""

