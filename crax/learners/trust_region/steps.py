"""The trust-region learners' step arithmetic as pure functions, all jittable and free of host syncs:
arrays, floats and functions of arrays in, arrays out. :class:`~crax.learners.trust_region.family.TrustRegionPPO`
and its learners evaluate the actor and call these; ``tests/learners/test_steps_trust_region.py`` checks
each against its equation.

* :func:`fisher_operator`: θ ↦ (F + damping·I) θ with F the Fisher of :func:`mean_kl_per_dim` between the
  iteration's policy and the policy at θ, by ``jax.linearize`` (the forward product J v) and ``jax.vjp``
  (the transposed product Jᵀ w) through the policy, with the Gaussian's own Fisher in between; F is never
  materialized.
* :func:`conjugate_gradient`: a fixed number of CG iterations (``lax.fori_loop``).
* :func:`backtracking_line_search`: fractions 1, β, β², … of a step, the first one accepted
  (``lax.while_loop``, at most a fixed number of tries), with :func:`trpo_accepts` and
  :func:`cost_checked_accepts` the tests a try passes.
* the steps' directions: :func:`trpo_direction` (the natural gradient scaled to the trust region's edge),
  :func:`cpo_direction` and :func:`pcpo_direction` (the linearized constraint's closed forms, on
  :func:`constraint_value`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from crax.learners.shared.networks import gaussian_kl_per_dim

EPS = 1e-8
"""What keeps the steps' divisions finite (added to xᵀHx, s and λ where they divide)."""

CASES = {0: "infeasible: the pure cost-reducing step", 1: "infeasible now, the trust region reaches the feasible set",
         2: "feasible, the constraint cuts the trust region", 3: "feasible, the constraint leaves the trust region",
         4: "feasible and no cost gradient"}
"""CPO's cases as logged in ``cpo/case`` (OmniSafe's numbering)."""


def mean_kl_per_dim(loc_p: jax.Array, scale_p: jax.Array, loc_q: jax.Array, scale_q: jax.Array) -> jax.Array:
    """KL(p ‖ q) of diagonal Gaussians averaged over the states and the action dimensions: the measure δ
    bounds (OmniSafe's ``kl_divergence(Normal, Normal).mean()``)."""
    return jnp.mean(gaussian_kl_per_dim(loc_p, scale_p, loc_q, scale_q))


def fisher_operator(dist_fn: Callable[[jax.Array], tuple[jax.Array, jax.Array]], theta: jax.Array,
                    damping: float | jax.Array = 0.0) -> Callable[[jax.Array], jax.Array]:
    """v ↦ (F + damping·I) v, F the Hessian at θ of KL(π_θ(·|s) ‖ π_θ'(·|s)) over θ', averaged over the
    states and the action dimensions (:func:`mean_kl_per_dim`, OmniSafe's ``NaturalPG._fvp``), which is the
    policy's Fisher information per action dimension: Jᵀ M J v, with J the Jacobian of ``dist_fn`` (θ ↦ the
    Gaussians' ``(loc, scale)``, leading axis the states) and M the Hessian of that mean KL in those outputs."""
    out, jvp_fn = jax.linearize(dist_fn, theta)
    _, vjp_fn = jax.vjp(dist_fn, theta)
    ref = jax.lax.stop_gradient(out)
    kl_grad = jax.grad(lambda o: mean_kl_per_dim(ref[0], ref[1], o[0], o[1]))

    def fvp(v: jax.Array) -> jax.Array:
        m_jv = jax.jvp(kl_grad, (out,), (jvp_fn(v),))[1]
        return vjp_fn(m_jv)[0] + damping * v

    return fvp


def conjugate_gradient(mvp: Callable[[jax.Array], jax.Array], b: jax.Array, iterations: int,
                       eps: float = 0.0) -> jax.Array:
    """Approximately solves A x = b for symmetric positive (semi)definite A given as ``mvp`` (x ↦ A x),
    by ``iterations`` conjugate-gradient steps from x = 0 (a step on a zero residual does nothing).

    ``eps`` is added to the denominators of both step sizes, as OmniSafe's ``conjugate_gradients`` adds
    1e-6 (its tests set it to compare updates; docs/DECISIONS.md, decision 78): once the squared residual nears ``eps`` the
    search directions lose their conjugacy and the solve stalls (0.2 % off the exact solution on
    ``tests/learners/test_omnisafe_trust_region.py``'s batch), so crax leaves it at 0."""

    def body(_, carry):
        x, r, p, rr = carry
        ap = mvp(p)
        pap = p @ ap + eps
        alpha = jnp.where(pap > 0, rr / jnp.where(pap > 0, pap, 1.0), 0.0)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = r @ r
        rr_eps = rr + eps
        beta = jnp.where(rr_eps > 0, rr_new / jnp.where(rr_eps > 0, rr_eps, 1.0), 0.0)
        return x, r, r + beta * p, rr_new

    return jax.lax.fori_loop(0, iterations, body, (jnp.zeros_like(b), b, b, b @ b))[0]


def backtracking_line_search(accept: Callable[[jax.Array], jax.Array], coef: float,
                             max_steps: int) -> tuple[jax.Array, jax.Array]:
    """Tries the fractions 1, β, β², … (``max_steps`` of them) of a step in turn and stops at the first
    that ``accept(fraction)`` takes. Returns ``(fraction, try)``: the accepted fraction and its 1-based
    try, or ``(0, 0)`` when none was accepted."""

    def cond(carry):
        tries, ok = carry
        return jnp.logical_and(~ok, tries < max_steps)

    def body(carry):
        tries, _ = carry
        return tries + 1, accept(jnp.power(coef, tries.astype(jnp.float32)))

    tries, ok = jax.lax.while_loop(cond, body, (jnp.zeros((), jnp.int32), jnp.zeros((), bool)))
    fraction = jnp.where(ok, jnp.power(coef, (tries - 1).astype(jnp.float32)), 0.0)
    return fraction, jnp.where(ok, tries, 0)


def trpo_accepts(gain: jax.Array, kl: jax.Array, target_kl: float) -> jax.Array:
    """TRPO's line-search test of a try: the surrogate's ``gain`` is finite and not negative, and the KL
    stays within δ."""
    return jnp.isfinite(gain) & (gain >= 0) & (kl <= target_kl)


def cost_checked_accepts(gain: jax.Array, cost_change: jax.Array, kl: jax.Array, c: jax.Array, target_kl: float,
                         check_reward: jax.Array | bool) -> jax.Array:
    """CPO's and PCPO's line-search test of a try: both surrogates' changes are finite, KL ≤ δ, the cost
    surrogate rises by at most max(−c, 0) (falls when the constraint is violated) and, where
    ``check_reward``, the reward surrogate's ``gain`` is not negative."""
    ok = jnp.isfinite(gain) & jnp.isfinite(cost_change) & (kl <= target_kl)
    return ok & (cost_change <= jnp.maximum(-c, 0.0)) & (~jnp.asarray(check_reward) | (gain >= 0))


def trpo_direction(x: jax.Array, xhx: jax.Array, target_kl: float) -> jax.Array:
    """The natural-gradient step scaled to the trust region's edge: sqrt(2δ / xᵀHx) · x, x ≈ H⁻¹g."""
    return jnp.sqrt(2.0 * target_kl / (xhx + EPS)) * x


def constraint_value(violation: jax.Array, cost_scale: jax.Array, horizon: int) -> jax.Array:
    """c, the linearized constraint's value in the cost surrogate's units: ``horizon`` × v / ``cost_scale``
    (``horizon`` T for the episode's excess T·v, 1 for the per-step violation v)."""
    return violation / cost_scale * horizon


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


def pcpo_direction(x: jax.Array, p: jax.Array, q: jax.Array, r: jax.Array, s: jax.Array, c: jax.Array,
                   target_kl: float) -> tuple[jax.Array, jax.Array]:
    """The reward step sqrt(2δ/q)·x, then its projection in the KL metric onto c + bᵀΔθ ≤ 0:
    minus max(0, (sqrt(2δ/q)·r + c)/s)·p (x = H⁻¹g, p = H⁻¹b, q = gᵀH⁻¹g, r = gᵀH⁻¹b, s = bᵀH⁻¹b).
    Returns the step and the projection's coefficient (0 when the reward step satisfies the constraint).
    OmniSafe's ``PCPO._update_actor`` takes H·x for x in the reward step (docs/DECISIONS.md, decision 78)."""
    reward_step = trpo_direction(x, q, target_kl)
    alpha = jnp.sqrt(2.0 * target_kl / (q + EPS))
    projection = jnp.maximum((alpha * r + c) / (s + EPS), 0.0)
    return reward_step - projection * p, projection
