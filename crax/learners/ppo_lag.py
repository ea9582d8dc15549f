"""PPO-Lag: Lagrangian PPO with gradient ascent on λ."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.learners.base import ConstrainedPPO, Multiplier, PPOConfig


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's."""

    lambda_lr: float = 3.0
    """Step size η_λ of the ascent λ ← max(0, λ + η_λ v), v the per-step violation."""
    lambda_init: float = 0.0
    """Initial multiplier λ₀."""


def lagrangian_advantage(adv_r: jax.Array, adv_c: jax.Array, lam: jax.Array) -> jax.Array:
    """(Â_r − λ Â_c) / (1 + λ): the mixed advantage of the Lagrangian learners."""
    return (adv_r - lam * adv_c) / (1.0 + lam)


class PPOLag(ConstrainedPPO):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "ppo-lag"
    Config: ClassVar[type[PPOConfig]] = PPOLagConfig

    def init_multipliers(self) -> None:
        self.lagrange = Multiplier(jnp.asarray(self.config.lambda_init, jnp.float32))

    def multiplier_update(self, violation: jax.Array) -> None:
        self.lagrange[...] = jnp.maximum(0.0, self.lagrange[...] + self.config.lambda_lr * violation)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))
