"""PPO-Lag with a capped multiplier: a third-party learner that overrides one hook.

Registered under the name ``ppo-lag-capped``, it appears as ``crax train ppo-lag-capped`` with every
PPO-Lag flag plus ``--lambda-max``.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.learners import PPOConfig, PPOLag, PPOLagConfig


@dataclasses.dataclass(frozen=True)
class CappedPPOLagConfig(PPOLagConfig):
    """PPO-Lag hyperparameters plus the cap on λ."""

    lambda_max: float = 5.0
    """Upper bound of the multiplier: λ ← clip(λ + η_λ v, 0, λ_max)."""


class CappedPPOLag(PPOLag):
    """PPO-Lag whose multiplier never exceeds ``lambda_max`` (bounds how far reward can be traded away)."""

    name: ClassVar[str] = "ppo-lag-capped"
    Config: ClassVar[type[PPOConfig]] = CappedPPOLagConfig

    def multiplier_update(self, violation: jax.Array) -> None:
        c = self.config
        self.lagrange[...] = jnp.clip(self.lagrange[...] + c.lambda_lr * violation, 0.0, c.lambda_max)
