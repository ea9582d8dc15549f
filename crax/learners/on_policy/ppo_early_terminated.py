"""PPO-early-terminated: PPO with ``early_termination`` on (OmniSafe's ``PPOEarlyTerminated``): a training
episode ends once its cost passes ``safety_bound`` (:mod:`crax.core.early_termination`)."""

from __future__ import annotations

import dataclasses

from crax.learners.on_policy.family import ConstrainedPPO
from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig


@dataclasses.dataclass(frozen=True)
class PPOEarlyTerminatedConfig(OmniSafePPOConfig):
    """OmniSafe's PPO defaults (PPOEarlyTerminated.yaml's clip and entropy) with early termination on."""

    early_termination: bool = True
    """End a training episode once its cost passes ``safety_bound`` (OmniSafe's ``cost_limit``)."""


class PPOEarlyTerminated(ConstrainedPPO, name="ppo-early-terminated", config=PPOEarlyTerminatedConfig):
    """PPO on the early-terminated env: ``early_termination``, which any learner takes, on by default."""

