"""TRPO-early-terminated: TRPO with ``early_termination`` on (OmniSafe's ``TRPOEarlyTerminated``): a
training episode ends once its cost passes ``safety_bound`` (:mod:`crax.core.early_termination`)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import PPOConfig
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOEarlyTerminatedConfig(TrustRegionConfig):
    """TRPOEarlyTerminated.yaml's defaults (the trust-region fields) with early termination on."""

    early_termination: bool = True
    """End a training episode once its cost passes ``safety_bound`` (OmniSafe's ``cost_limit``)."""


class TRPOEarlyTerminated(TrustRegionPPO):
    """TRPO on the early-terminated env: ``early_termination``, which any learner takes, on by default."""

    name: ClassVar[str] = "trpo-early-terminated"
    Config: ClassVar[type[PPOConfig]] = TRPOEarlyTerminatedConfig
