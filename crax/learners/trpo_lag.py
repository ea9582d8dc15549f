"""TRPO-Lag: TRPO on the Lagrangian mix of the advantages, λ by the rule PPO-Lag uses."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.base import PPOConfig
from crax.learners.multipliers import LagrangianFields, lagrangian_advantage, lagrangian_ascent
from crax.learners.trust_region import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class TRPOLagConfig(LagrangianFields, TrustRegionConfig):
    """TRPO-Lag hyperparameters: the trust-region fields plus the multiplier's (:class:`LagrangianFields`)."""


class TRPOLag(TrustRegionPPO):
    """TRPO step on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "trpo-lag"
    Config: ClassVar[type[PPOConfig]] = TRPOLagConfig
    config: TRPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        self.lagrange[...] = lagrangian_ascent(self.lagrange[...], violation, self.config.lambda_lr)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))
