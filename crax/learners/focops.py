"""FOCOPS: first-order constrained optimization in policy space, with a per-state trust-region mask."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.base import ConstrainedPPO, PolicyBatch, PPOConfig
from crax.learners.multipliers import weighted_cost


@dataclasses.dataclass(frozen=True)
class FOCOPSConfig(PPOConfig):
    """FOCOPS hyperparameters: the shared PPO fields plus ν's schedule, λ_f and δ."""

    nu_init: float = ranged(0.1, ge=0)
    """Initial cost multiplier ν₀."""
    nu_lr: float = ranged(1.0, gt=0)
    """Step size η_ν of ν ← clip(ν + η_ν v, 0, ν_max)."""
    nu_max: float = ranged(100.0, ge="nu_init", gt=0)
    """Upper clip ν_max of the cost multiplier."""
    focops_lambda: float = ranged(1.5, gt=0)
    """Temperature λ_f of the KL-regularized target."""
    kl_delta: float = ranged(0.02, gt=0)
    """Per-state trust region δ: states whose KL(π_θ ‖ π_old) exceeds it drop out of the loss."""


def focops_loss(kl: jax.Array, ratio: jax.Array, adv_r: jax.Array, adv_c: jax.Array, nu: jax.Array,
                temperature: float, delta: float) -> tuple[jax.Array, jax.Array]:
    """Mean over states of ``(KL − ρ (Â_r − Σ ν_k Â_c,k)/λ_f) · 1[KL ≤ δ]``; also returns the mask."""
    mask = (kl <= delta).astype(kl.dtype)
    per_state = kl - ratio * (adv_r - weighted_cost(nu, adv_c, adv_r)) / temperature
    return jnp.mean(per_state * jax.lax.stop_gradient(mask)), mask


class FOCOPS(ConstrainedPPO):
    """Per-state ``KL(π_θ ‖ π_old) − (1/λ_f) ρ (Â_r − ν Â_c)``, masked where KL > δ; ν by projected ascent."""

    name: ClassVar[str] = "focops"
    Config: ClassVar[type[PPOConfig]] = FOCOPSConfig
    config: FOCOPSConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.nu = self.multiplier_init(self.config.nu_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        c = self.config
        self.nu[...] = jnp.clip(self.nu[...] + c.nu_lr * violation, 0.0, c.nu_max)

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        c = self.config
        loss, mask = focops_loss(batch.kl, batch.ratio, batch.adv_r, batch.adv_c, self.penalty(self.nu),
                                 c.focops_lambda, c.kl_delta)
        return loss, {"policy/trust_region_fraction": jnp.mean(mask)}
