"""DDPGLag: DDPG whose actor maximizes (Q_r − λ Q_c)/(1 + λ), λ by the shared Lagrangian rule."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.ddpg import DDPG, DDPGFields
from crax.learners.multipliers import LagrangianRule
from crax.learners.off_policy import OffPolicyConfig, OffPolicyLagrangianFields


@dataclasses.dataclass(frozen=True)
class DDPGLagConfig(OffPolicyLagrangianFields, DDPGFields, OffPolicyConfig):
    """DDPGLag's hyperparameters: the off-policy family's, DDPG's and the multiplier rule's."""


class DDPGLag(LagrangianRule, DDPG):
    """DDPG with the objective (Q_r − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k);
    λ ← max(0, λ + η_λ v) once per iteration (the rule ppo-lag uses)."""

    name: ClassVar[str] = "ddpg-lag"
    Config: ClassVar[type[OffPolicyConfig]] = DDPGLagConfig
    config: DDPGLagConfig  # type: ignore[assignment]
    supports_budgets: ClassVar[bool] = True

    def objective(self, q_r: jax.Array, q_c: jax.Array) -> jax.Array:
        return self.lagrangian_mix(q_r, q_c)
