"""DDPGPID: DDPG whose actor maximizes (Q_r − λ Q_c)/(1 + λ), λ by the shared PID rule."""

from __future__ import annotations

import dataclasses

from crax.core.params import ranged
from crax.learners.off_policy.ddpg import DDPG, DDPGFields
from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyPIDFields
from crax.learners.rules import PIDRule


@dataclasses.dataclass(frozen=True)
class DDPGPIDConfig(OffPolicyPIDFields, DDPGFields, OffPolicyConfig):
    """DDPGPID's hyperparameters: the off-policy family's, DDPG's and the multiplier rule's."""

    lambda_init: float = ranged(0.0, ge=0)
    """The integral's initial value I₀ (OmniSafe's DDPGPID ``lagrangian_multiplier_init``: 0)."""


class DDPGPID(DDPG, name="ddpg-pid", config=DDPGPIDConfig, rule=PIDRule, budgets=True):
    """DDPG with the objective (Q_r − λ Q_c)/(1 + λ) (per budgeted term: Σ λ_k Q_c,k);
    λ by the positional PID Lagrangian (OmniSafe's ``PIDLagrangian``) on T·ĉ once per iteration
    (the rule ppo-pid uses, with the off-policy gains: docs/DECISIONS.md, decision 79)."""
