"""PPO: the unconstrained baseline (clip surrogate on Â_r; the cost is only measured)."""

from __future__ import annotations

from typing import ClassVar

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig


class PPO(ConstrainedPPO):
    """Proximal policy optimization on the reward alone; no hook overridden."""

    name: ClassVar[str] = "ppo"
    Config: ClassVar[type[PPOConfig]] = PPOConfig
    reads_bound: ClassVar[bool] = False
