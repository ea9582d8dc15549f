"""PPO-Lag with a capped multiplier: a third-party learner composed of PPO-Lag and a rule of its own.

Registered under the name ``ppo-lag-capped``, it appears as ``crax train ppo-lag-capped`` with every
PPO-Lag flag (``--lambda-max`` among them, here 5 by default) plus ``--lambda-step-max``.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.learners import LagrangianRule, PPOLag, PPOLagConfig, ranged


@dataclasses.dataclass(frozen=True)
class CappedPPOLagConfig(PPOLagConfig):
    """PPO-Lag hyperparameters with the cap on λ set."""

    lambda_max: float | None = ranged(5.0, gt=0, optional=True)
    """Upper bound of the multiplier: λ ← clip(λ + η_λ v, 0, λ_max)."""
    lambda_step_max: float = ranged(0.5, gt=0)
    """The most λ moves in one iteration (a rate limit against the multiplier's overshoot)."""


class RateLimitedLagrangianRule(LagrangianRule):
    """The Lagrangian rule's ascent with each step clipped to ±``lambda_step_max`` and λ to [0, ``lambda_max``]."""

    Fields: ClassVar[type[CappedPPOLagConfig]] = CappedPPOLagConfig
    config: CappedPPOLagConfig

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        c = self.config
        step = jnp.clip(c.lambda_lr * violation, -c.lambda_step_max, c.lambda_step_max)
        self.lagrange[...] = jnp.clip(self.lagrange[...] + step, 0.0, c.lambda_max)


class CappedPPOLag(PPOLag, name="ppo-lag-capped", config=CappedPPOLagConfig, rule=RateLimitedLagrangianRule):
    """PPO-Lag whose multiplier never exceeds ``lambda_max`` (bounds how far reward can be traded away) and
    moves at most ``lambda_step_max`` an iteration."""

