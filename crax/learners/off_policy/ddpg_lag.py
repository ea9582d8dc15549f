"""DDPGLag: DDPG whose actor maximizes (Q_r − λ Q_c)/(1 + λ), λ by the shared Lagrangian rule."""

from __future__ import annotations

import dataclasses

from crax.learners.off_policy.ddpg import DDPG, DDPGFields
from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLagrangianFields
from crax.learners.rules import LagrangianRule


@dataclasses.dataclass(frozen=True)
class DDPGLagConfig(OffPolicyLagrangianFields, DDPGFields, OffPolicyConfig):
    """DDPGLag's hyperparameters: the off-policy family's, DDPG's and the multiplier rule's."""


class DDPGLag(DDPG, name="ddpg-lag", config=DDPGLagConfig, rule=LagrangianRule, budgets=True):
    """DDPG with the objective (Q_r − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k);
    λ ← max(0, λ + η_λ v) once per iteration (the rule ppo-lag uses)."""
