"""FOCOPS (Zhang, Vuong & Ross 2020) in OmniSafe's form: a per-state KL-regularized target with a
per-state trust-region mask, the cost multiplier ν stepped by the Lagrangian rule, and the epochs
stopped early once the policy has moved ``target_kl`` from where the update began."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.on_policy.family import ConstrainedPPO, PolicyBatch, PPOConfig
from crax.learners.on_policy.losses import focops_loss
from crax.learners.rules import LagrangianFields, LagrangianRule, LambdaOptimizer


@dataclasses.dataclass(frozen=True)
class FOCOPSConfig(LagrangianFields, PPOConfig):
    """FOCOPS hyperparameters: the shared PPO fields, the multiplier's (:class:`LagrangianFields`, with
    OmniSafe's FOCOPS.yaml defaults: Adam at 0.035 from 0.001, capped at 2), λ_f and δ."""

    retired_fields: ClassVar[dict[str, str]] = {"nu_init": "FOCOPS's own ν rule became the shared Lagrangian rule, OmniSafe's (docs/DECISIONS.md, decision 80)", "nu_lr": "FOCOPS's own ν rule became the shared Lagrangian rule, OmniSafe's (docs/DECISIONS.md, decision 80)", "nu_max": "FOCOPS's own ν rule became the shared Lagrangian rule, OmniSafe's (docs/DECISIONS.md, decision 80)"}
    """Fields of runs stored before ν's rule changed (read by ``crax.runs.checkpoint.config_from_dict``)."""

    lambda_lr: float = ranged(0.035, gt=0)
    """Adam's learning rate for ν (FOCOPS.yaml's ``lambda_lr``)."""
    lambda_init: float = ranged(0.001, ge=0)
    """Initial cost multiplier ν₀."""
    lambda_optimizer: LambdaOptimizer = "adam"
    """ν's rule: OmniSafe's Adam on −ν·(J_c − d) (``adam``) or projected ascent on v (``sgd``)."""
    lambda_max: float | None = ranged(2.0, gt=0, optional=True)
    """Upper clip ν_max (FOCOPS.yaml's ``lagrangian_upper_bound``)."""
    focops_lambda: float = ranged(1.5, gt=0)
    """Temperature λ_f of the KL-regularized target."""
    kl_delta: float = ranged(0.02, gt=0)
    """Per-state trust region δ (OmniSafe's ``focops_eta``): states whose KL(π_θ ‖ π_old) exceeds it drop out
    of the loss."""
    target_kl: float | None = ranged(0.02, gt=0, optional=True)
    """The epochs stop after the first whose mean KL from the update's starting policy exceeds it
    (FOCOPS.yaml's ``target_kl``; :meth:`~crax.learners.on_policy.family.ConstrainedPPO.kl_early_stop`)."""


class FOCOPS(ConstrainedPPO, name="focops", config=FOCOPSConfig, rule=LagrangianRule, budgets=True):
    """Per-state ``KL(π_θ ‖ π_old) − (1/λ_f) ρ (Â_r − ν Â_c)/(1 + ν)``, masked where KL > δ; ν (the
    ``lagrange`` multiplier) by the Lagrangian rule, as OmniSafe's FOCOPS steps it
    (:func:`~crax.learners.on_policy.losses.focops_loss`)."""

    config: FOCOPSConfig  # the instance of Config that __init__ stores

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        c = self.config
        adv = self.advantage(batch.adv_r, batch.adv_c, batch.violation)
        loss, mask = focops_loss(batch.kl, batch.ratio, adv, c.focops_lambda, c.kl_delta)
        return loss, {"policy/trust_region_fraction": jnp.mean(mask)}
