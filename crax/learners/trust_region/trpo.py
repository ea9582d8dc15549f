"""TRPO: the unconstrained trust-region baseline (the cost is only measured)."""

from __future__ import annotations

from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


class TRPO(TrustRegionPPO, name="trpo", config=TrustRegionConfig, reads_bound=False):
    """Trust-region policy optimization on the reward alone: :class:`TrustRegionPPO` with no hook
    overridden (OmniSafe's ``TRPO``, TRPO.yaml's defaults)."""

