"""PPO-Lag: Lagrangian PPO with gradient ascent on λ."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.base import ConstrainedPPO, PPOConfig, weighted_cost


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's."""

    lambda_lr: float = ranged(3.0, gt=0)
    """Step size η_λ of the ascent λ ← max(0, λ + η_λ v), v the per-step violation."""
    lambda_init: float = ranged(0.0, ge=0)
    """Initial multiplier λ₀."""


def lagrangian_advantage(adv_r: jax.Array, adv_c: jax.Array, lam: jax.Array) -> jax.Array:
    """(Â_r − Σ λ_k Â_c,k) / (1 + Σ λ_k): the mixed advantage of the Lagrangian learners (one term: λ scalar)."""
    return (adv_r - weighted_cost(lam, adv_c, adv_r)) / (1.0 + jnp.sum(lam))


class PPOLag(ConstrainedPPO):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "ppo-lag"
    Config: ClassVar[type[PPOConfig]] = PPOLagConfig
    config: PPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        self.lagrange[...] = jnp.maximum(0.0, self.lagrange[...] + self.config.lambda_lr * violation)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))
