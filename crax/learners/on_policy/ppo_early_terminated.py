"""PPO-early-terminated: PPO with ``early_termination`` on (OmniSafe's ``PPOEarlyTerminated``): a training
episode ends once its cost passes ``safety_bound`` (:mod:`crax.core.early_termination`)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig


@dataclasses.dataclass(frozen=True)
class PPOEarlyTerminatedConfig(OmniSafePPOConfig):
    """OmniSafe's PPO defaults (PPOEarlyTerminated.yaml's clip and entropy) with early termination on."""

    early_termination: bool = True
    """End a training episode once its cost passes ``safety_bound`` (OmniSafe's ``cost_limit``)."""


class PPOEarlyTerminated(ConstrainedPPO):
    """PPO on the early-terminated env: ``early_termination``, which any learner takes, on by default."""

    name: ClassVar[str] = "ppo-early-terminated"
    Config: ClassVar[type[PPOConfig]] = PPOEarlyTerminatedConfig
