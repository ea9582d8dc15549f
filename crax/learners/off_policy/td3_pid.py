"""TD3PID: TD3 whose actor maximizes (Q_r1 − λ Q_c)/(1 + λ), λ by the shared PID rule."""

from __future__ import annotations

import dataclasses

from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyPIDFields
from crax.learners.off_policy.td3 import TD3, TD3Fields
from crax.learners.rules import PIDRule


@dataclasses.dataclass(frozen=True)
class TD3PIDConfig(OffPolicyPIDFields, TD3Fields, OffPolicyConfig):
    """TD3PID's hyperparameters: the off-policy family's, TD3's and the multiplier rule's."""


class TD3PID(TD3, name="td3-pid", config=TD3PIDConfig, rule=PIDRule, budgets=True):
    """TD3 with the objective (Q_r1 − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k);
    λ by the positional PID Lagrangian (OmniSafe's ``PIDLagrangian``) on T·ĉ once per iteration
    (the rule ppo-pid uses, with the off-policy gains: docs/DECISIONS.md, decision 79)."""
