"""SACLag: SAC whose actor maximizes (min Q_r − α log π − λ Q_c)/(1 + λ), λ by the shared Lagrangian rule."""

from __future__ import annotations

import dataclasses

from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLagrangianFields
from crax.learners.off_policy.sac import SAC, SACFields
from crax.learners.rules import LagrangianRule


@dataclasses.dataclass(frozen=True)
class SACLagConfig(OffPolicyLagrangianFields, SACFields, OffPolicyConfig):
    """SACLag's hyperparameters: the off-policy family's, SAC's and the multiplier rule's."""


class SACLag(SAC, name="sac-lag", config=SACLagConfig, rule=LagrangianRule, budgets=True):
    """SAC with the objective (min Q_r − α log π − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k;
    OmniSafe's SACLag and SACPID divide the entropy term by 1 + λ too);
    λ ← max(0, λ + η_λ v) once per iteration (the rule ppo-lag uses)."""
