"""TRPO-Simmer-PID: TRPO on Saute's budget state with the budget moved by Simmer's PID controller
(OmniSafe's ``TRPOSimmerPID``), through the environment and multiplier hooks only."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import PPOConfig
from crax.learners.rules import ConstraintRule, SimmerFields, SimmerRule
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOSimmerPIDConfig(SimmerFields, TrustRegionConfig):
    """TRPO-Simmer-PID hyperparameters: the trust-region fields plus Simmer's (:class:`SimmerFields`)."""


class TRPOSimmerPID(TrustRegionPPO):
    """TRPO on :class:`crax.learners.shared.budget_envs.SimmerBudget` with :class:`~crax.learners.rules.simmer.SimmerRule`'s budget."""

    name: ClassVar[str] = "trpo-simmer-pid"
    Config: ClassVar[type[PPOConfig]] = TRPOSimmerPIDConfig
    Rule: ClassVar[type[ConstraintRule] | None] = SimmerRule
    config: TRPOSimmerPIDConfig  # type: ignore[assignment]  # the instance of Config that __init__ stores
