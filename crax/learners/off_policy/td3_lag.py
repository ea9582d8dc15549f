"""TD3Lag: TD3 whose actor maximizes (Q_r1 − λ Q_c)/(1 + λ), λ by the shared Lagrangian rule."""

from __future__ import annotations

import dataclasses

from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLagrangianFields
from crax.learners.off_policy.td3 import TD3, TD3Fields
from crax.learners.rules import LagrangianRule


@dataclasses.dataclass(frozen=True)
class TD3LagConfig(OffPolicyLagrangianFields, TD3Fields, OffPolicyConfig):
    """TD3Lag's hyperparameters: the off-policy family's, TD3's and the multiplier rule's."""


class TD3Lag(TD3, name="td3-lag", config=TD3LagConfig, rule=LagrangianRule, budgets=True):
    """TD3 with the objective (Q_r1 − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k);
    λ ← max(0, λ + η_λ v) once per iteration (the rule ppo-lag uses)."""
