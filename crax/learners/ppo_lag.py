"""PPO-Lag: Lagrangian PPO with gradient ascent on λ."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.multipliers import LagrangianFields, lagrangian_advantage, lagrangian_ascent

__all__ = ["PPOLag", "PPOLagConfig", "lagrangian_advantage"]


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(LagrangianFields, PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's (:class:`LagrangianFields`)."""


class PPOLag(ConstrainedPPO):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "ppo-lag"
    Config: ClassVar[type[PPOConfig]] = PPOLagConfig
    config: PPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        self.lagrange[...] = lagrangian_ascent(self.lagrange[...], violation, self.config.lambda_lr)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))
