"""TRPO-Simmer-PID: TRPO on Saute's budget state with the budget moved by Simmer's PID controller
(OmniSafe's ``TRPOSimmerPID``), through the environment and multiplier hooks only."""

from __future__ import annotations

import dataclasses

from crax.learners.rules import SimmerFields, SimmerRule
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOSimmerPIDConfig(SimmerFields, TrustRegionConfig):
    """TRPO-Simmer-PID hyperparameters: the trust-region fields plus Simmer's (:class:`SimmerFields`)."""


class TRPOSimmerPID(TrustRegionPPO, name="trpo-simmer-pid", config=TRPOSimmerPIDConfig, rule=SimmerRule):
    """TRPO on :class:`crax.learners.shared.budget_envs.SimmerBudget` with :class:`~crax.learners.rules.simmer.SimmerRule`'s budget."""

