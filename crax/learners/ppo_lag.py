"""PPO-Lag: Lagrangian PPO with gradient ascent on λ, and the Lagrangian hooks that TRPO-Lag and CUP share."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.multipliers import LagrangianFields, LagrangianRule, lagrangian_advantage

__all__ = ["LagrangianMultiplier", "PPOLag", "PPOLagConfig", "lagrangian_advantage"]


class LagrangianMultiplier(LagrangianRule, ConstrainedPPO):
    """The shared Lagrangian rule (:class:`~crax.learners.multipliers.LagrangianRule`) on the PPO
    family: the advantage is (Â_r − λ Â_c)/(1 + λ). A learner whose config has
    :class:`LagrangianFields` lists it first among its bases (``class TRPOLag(LagrangianMultiplier,
    TrustRegionPPO)``)."""

    config: LagrangianFields  # type: ignore[assignment]  # with the learner's own PPOConfig fields

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return self.lagrangian_mix(adv_r, adv_c)


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(LagrangianFields, PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's (:class:`LagrangianFields`)."""


class PPOLag(LagrangianMultiplier):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "ppo-lag"
    Config: ClassVar[type[PPOConfig]] = PPOLagConfig
    config: PPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True
