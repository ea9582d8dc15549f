"""TRPO-early-terminated: TRPO on the early-terminated env (OmniSafe's ``TRPOEarlyTerminated``), through
the environment hook only: an episode ends once its cost passes ``safety_bound``."""

from __future__ import annotations

from typing import ClassVar

from crax.core.early_termination import terminate_early
from crax.core.env import Env
from crax.learners.on_policy.family import PPOConfig
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


class TRPOEarlyTerminated(TrustRegionPPO):
    """TRPO (TRPOEarlyTerminated.yaml's defaults) on :func:`crax.core.early_termination.terminate_early`
    ``(env, safety_bound)``: ``safety_bound`` is OmniSafe's ``cost_limit``."""

    name: ClassVar[str] = "trpo-early-terminated"
    Config: ClassVar[type[PPOConfig]] = TrustRegionConfig

    @classmethod
    def wrap_env(cls, env: Env, config: PPOConfig) -> Env:
        return terminate_early(env, config.safety_bound)
