"""SACPID: SAC whose actor maximizes (min Q_r − α log π − λ Q_c)/(1 + λ), λ by the shared PID rule."""

from __future__ import annotations

import dataclasses

from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyPIDFields
from crax.learners.off_policy.sac import SAC, SACFields
from crax.learners.rules import PIDRule


@dataclasses.dataclass(frozen=True)
class SACPIDConfig(OffPolicyPIDFields, SACFields, OffPolicyConfig):
    """SACPID's hyperparameters: the off-policy family's, SAC's and the multiplier rule's."""


class SACPID(SAC, name="sac-pid", config=SACPIDConfig, rule=PIDRule, budgets=True):
    """SAC with the objective (min Q_r − α log π − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k;
    OmniSafe's SACLag and SACPID divide the entropy term by 1 + λ too);
    λ by the positional PID Lagrangian (OmniSafe's ``PIDLagrangian``) on T·ĉ once per iteration
    (the rule ppo-pid uses, with the off-policy gains: docs/DECISIONS.md, decision 79)."""
