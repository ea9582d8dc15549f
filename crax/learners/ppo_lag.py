"""PPO-Lag: Lagrangian PPO with gradient ascent on λ, and the Lagrangian hooks that TRPO-Lag and CUP share."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.multipliers import LagrangianFields, lagrangian_advantage, lagrangian_ascent

__all__ = ["LagrangianMultiplier", "PPOLag", "PPOLagConfig", "lagrangian_advantage"]


class LagrangianMultiplier(ConstrainedPPO):
    """The Lagrangian rule as :class:`ConstrainedPPO` hooks: λ (one per budgeted term) starts at
    ``lambda_init``, steps λ ← max(0, λ + η_λ v) once per iteration, and mixes the advantage as
    (Â_r − λ Â_c)/(1 + λ). A learner whose config has :class:`LagrangianFields` lists it first among
    its bases (``class TRPOLag(LagrangianMultiplier, TrustRegionPPO)``)."""

    config: LagrangianFields  # type: ignore[assignment]  # with the learner's own PPOConfig fields

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        self.lagrange[...] = lagrangian_ascent(self.lagrange[...], violation, self.config.lambda_lr)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(LagrangianFields, PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's (:class:`LagrangianFields`)."""


class PPOLag(LagrangianMultiplier):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "ppo-lag"
    Config: ClassVar[type[PPOConfig]] = PPOLagConfig
    config: PPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True
