"""TRPO-Simmer-PID: TRPO on Saute's budget state with the budget moved by Simmer's PID controller
(OmniSafe's ``TRPOSimmerPID``), through the environment and multiplier hooks only."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.base import PPOConfig
from crax.learners.simmer_controller import SimmerController, SimmerFields
from crax.learners.trust_region import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOSimmerPIDConfig(SimmerFields, TrustRegionConfig):
    """TRPO-Simmer-PID hyperparameters: the trust-region fields plus Simmer's (:class:`SimmerFields`)."""


class TRPOSimmerPID(SimmerController, TrustRegionPPO):
    """TRPO on :class:`crax.core.simmer.SimmerBudget` with :class:`SimmerController`'s budget."""

    name: ClassVar[str] = "trpo-simmer-pid"
    Config: ClassVar[type[PPOConfig]] = TRPOSimmerPIDConfig
    config: TRPOSimmerPIDConfig  # type: ignore[assignment]  # the instance of Config that __init__ stores
