"""CPO (Achiam et al. 2017): the trust-region step that solves the linearized constrained problem."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.on_policy.family import IterationBatch, PPOConfig
from crax.learners.trust_region.family import (
    EPS,
    LinearizedConfig,
    PolicySpace,
    TrustRegionPPO,
    cost_checked_step,
    linearize,
    trpo_direction,
)

CASES = {0: "infeasible: the pure cost-reducing step", 1: "infeasible now, the trust region reaches the feasible set",
         2: "feasible, the constraint cuts the trust region", 3: "feasible, the constraint leaves the trust region",
         4: "feasible and no cost gradient"}
"""CPO's cases as logged in ``cpo/case`` (OmniSafe's numbering)."""


@dataclasses.dataclass(frozen=True)
class CPOConfig(LinearizedConfig):
    """CPO hyperparameters: the trust-region fields (OmniSafe's CPO tries 20 line-search steps)."""

    backtrack_steps: int = ranged(20, ge=1, integer=True)
    """Line-search tries at most; when none is accepted the actor stays as it was."""


def cpo_direction(x: jax.Array, p: jax.Array, q: jax.Array, r: jax.Array, s: jax.Array, c: jax.Array,
                  target_kl: float, cost_grad_sq: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The solution Δθ of max gᵀΔθ s.t. ½ΔθᵀHΔθ ≤ δ, c + bᵀΔθ ≤ 0, from its dual in closed form
    (Achiam et al. 2017, Theorem 2 and appendix 10.2), given x = H⁻¹g, p = H⁻¹b, q = gᵀH⁻¹g, r = gᵀH⁻¹b,
    s = bᵀH⁻¹b; when no Δθ in the trust region satisfies the constraint, the step that reduces the cost
    most, −sqrt(2δ/s)·p. Also returns the case (:data:`CASES`) and the dual variables λ*, ν*."""
    delta = target_kl
    a = q - r**2 / (s + EPS)
    b = 2.0 * delta - c**2 / (s + EPS)
    case = jnp.where(c < 0, jnp.where(b < 0, 3, 2), jnp.where(b >= 0, 1, 0))
    case = jnp.where((cost_grad_sq <= 1e-6) & (c < 0), 4, case)

    # the dual over λ in the paper's convention, where r is taken with the loss gradient −g: with
    # ρ = −r, λ ranges over Λa = {λ ≥ 0: λc − ρ > 0} and Λb = {λ ≥ 0: λc − ρ ≤ 0}; an empty range
    # gives no candidate (OmniSafe's _step_direction puts r for ρ and clamps to an empty range's upper
    # end, a negative λ: docs/DECISIONS.md, decision 78)
    rho = -r
    c_ = jnp.where(c == 0, EPS, c)
    rc = rho / c_
    inf = jnp.inf
    a_lo, a_hi = jnp.where(c_ > 0, jnp.maximum(rc, 0.0), 0.0), jnp.where(c_ > 0, inf, rc)
    b_lo, b_hi = jnp.where(c_ > 0, 0.0, jnp.maximum(rc, 0.0)), jnp.where(c_ > 0, rc, inf)
    lam_a = jnp.clip(jnp.sqrt(jnp.maximum(a, 0.0) / jnp.maximum(b, EPS)), a_lo, a_hi)
    lam_b = jnp.clip(jnp.sqrt(q / (2.0 * delta)), b_lo, b_hi)
    f_a = -0.5 * (a / (lam_a + EPS) + b * lam_a) - rho * c / (s + EPS)
    f_b = -0.5 * (q / (lam_b + EPS) + 2.0 * delta * lam_b)
    use_a = (a_lo <= a_hi) & ((f_a >= f_b) | (b_lo > b_hi))
    lam = jnp.where(use_a, lam_a, lam_b)
    nu = jnp.maximum(lam * c - rho, 0.0) / (s + EPS)
    dual = (x - nu * p) / (lam + EPS)

    recovery_nu = jnp.sqrt(2.0 * delta / (s + EPS))
    trpo = trpo_direction(x, q, delta)
    direction = jnp.where(case >= 3, trpo, jnp.where(case >= 1, dual, -recovery_nu * p))
    lam = jnp.where(case >= 3, jnp.sqrt(q / (2.0 * delta)), jnp.where(case >= 1, lam, 0.0))
    nu = jnp.where(case >= 3, 0.0, jnp.where(case >= 1, nu, recovery_nu))
    return direction, {"cpo/case": case.astype(jnp.float32), "cpo/lambda": lam, "cpo/nu": nu}


class CPO(TrustRegionPPO):
    """Constrained policy optimization: the closed-form step of the linearized problem, then a line
    search on KL ≤ δ, the cost surrogate and (in the feasible cases) the reward surrogate."""

    name: ClassVar[str] = "cpo"
    Config: ClassVar[type[PPOConfig]] = CPOConfig
    config: CPOConfig  # the instance of Config that __init__ stores

    def actor_step(self, space: PolicySpace, batch: IterationBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        lin = linearize(self, space, batch)
        direction, stats = cpo_direction(lin.x, lin.p, lin.q, lin.r, lin.s, lin.c, self.config.target_kl,
                                         lin.b @ lin.b)
        step, search = cost_checked_step(self, space, lin, direction, check_reward=stats["cpo/case"] >= 2)
        return step, {**search, **stats}
