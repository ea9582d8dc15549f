"""TRPO-early-terminated: TRPO with ``early_termination`` on (OmniSafe's ``TRPOEarlyTerminated``): a
training episode ends once its cost passes ``safety_bound`` (:mod:`crax.core.early_termination`)."""

from __future__ import annotations

import dataclasses

from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOEarlyTerminatedConfig(TrustRegionConfig):
    """TRPOEarlyTerminated.yaml's defaults (the trust-region fields) with early termination on."""

    early_termination: bool = True
    """End a training episode once its cost passes ``safety_bound`` (OmniSafe's ``cost_limit``)."""


class TRPOEarlyTerminated(TrustRegionPPO, name="trpo-early-terminated", config=TRPOEarlyTerminatedConfig):
    """TRPO on the early-terminated env: ``early_termination``, which any learner takes, on by default."""

