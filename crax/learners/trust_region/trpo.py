"""TRPO: the unconstrained trust-region baseline (the cost is only measured)."""

from __future__ import annotations

from typing import ClassVar

from crax.learners.on_policy.family import PPOConfig
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


class TRPO(TrustRegionPPO):
    """Trust-region policy optimization on the reward alone: :class:`TrustRegionPPO` with no hook
    overridden (OmniSafe's ``TRPO``, TRPO.yaml's defaults)."""

    name: ClassVar[str] = "trpo"
    Config: ClassVar[type[PPOConfig]] = TrustRegionConfig
    reads_bound: ClassVar[bool] = False
