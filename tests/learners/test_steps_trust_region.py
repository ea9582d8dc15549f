"""The trust-region step arithmetic (``crax/learners/trust_region/steps.py``) on known answers: CG on small
SPD systems, the Fisher-vector product against the Fisher of a hand-made Gaussian policy, the line search
and its acceptance tests, TRPO's step size, CPO's closed form against a numerical solution of the same
quadratic model in each case, PCPO's projection onto the constraint's boundary. (The actor's own Fisher
and the learners' steps are tested in test_trust_region.py, OmniSafe's numbers in
test_omnisafe_trust_region.py.)"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.learners.trust_region.steps import (
    backtracking_line_search,
    conjugate_gradient,
    constraint_value,
    cost_checked_accepts,
    cpo_direction,
    fisher_operator,
    mean_kl_per_dim,
    pcpo_direction,
    trpo_accepts,
    trpo_direction,
)

DELTA = 0.01


def f32(x) -> jax.Array:
    return jnp.asarray(x, jnp.float32)


def spd(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n, n))
    return m @ m.T / n + 0.5 * np.eye(n)


# ---- the KL, its Fisher, conjugate gradient ---------------------------------------------------------


def test_mean_kl_per_dim_averages_over_states_and_action_dimensions():
    # KL(N(0, 1) ‖ N(1, 2)) = log 2 + 2/8 − ½ in each dimension of the first state; the second state's is 0
    loc_p, scale_p = f32([[0.0, 0.0], [1.0, 1.0]]), f32([[1.0, 1.0], [2.0, 2.0]])
    loc_q, scale_q = f32([[1.0, 1.0], [1.0, 1.0]]), f32([[2.0, 2.0], [2.0, 2.0]])
    one = math.log(2.0) + 2.0 / 8.0 - 0.5
    assert float(mean_kl_per_dim(loc_p, scale_p, loc_q, scale_q)) == pytest.approx((2 * one) / 4, rel=1e-5)


def test_fisher_operator_is_the_gaussians_fisher_pulled_back_through_the_policy():
    # a policy linear in θ: loc = A θ and log scale = B θ, N = 3 states × D = 2 action dimensions. Per
    # dimension the Gaussian's Fisher is 1/σ² in the location and 2 in the log-scale, so the Fisher of the
    # KL averaged over N·D entries is (Aᵀ diag(1/σ²) A + 2 BᵀB) / (N·D).
    rng = np.random.default_rng(0)
    n, d, p = 3, 2, 5
    a, b = rng.normal(size=(n * d, p)), 0.3 * rng.normal(size=(n * d, p))
    theta = rng.normal(size=p)

    def dist(th):
        return (f32(a) @ th).reshape(n, d), jnp.exp(f32(b) @ th).reshape(n, d)

    sigma = np.exp(b @ theta)
    fisher = (a.T @ np.diag(1.0 / sigma**2) @ a + 2.0 * b.T @ b) / (n * d)
    for v in rng.normal(size=(3, p)):
        np.testing.assert_allclose(fisher_operator(dist, f32(theta))(f32(v)), fisher @ v, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(fisher_operator(dist, f32(theta), 0.1)(f32(v)), fisher @ v + 0.1 * v,
                                   rtol=1e-4, atol=1e-5)


def test_conjugate_gradient_solves_a_small_spd_system_exactly():
    a = np.asarray([[4.0, 1.0], [1.0, 3.0]])
    x = conjugate_gradient(lambda v: f32(a) @ v, f32([1.0, 2.0]), 2)  # n steps solve an n-dimensional system
    np.testing.assert_allclose(x, [1.0 / 11.0, 7.0 / 11.0], rtol=1e-6)
    # one step: the minimizer along the residual b, (bᵀb / bᵀAb)·b = (5/20)·b
    np.testing.assert_allclose(conjugate_gradient(lambda v: f32(a) @ v, f32([1.0, 2.0]), 1), [0.25, 0.5], rtol=1e-6)


def test_conjugate_gradient_solves_a_random_spd_system():
    a = spd(30, 0)
    b = np.random.default_rng(1).normal(size=30)
    want = np.linalg.solve(a, b)
    x = jax.jit(lambda b: conjugate_gradient(lambda v: jnp.asarray(a, jnp.float32) @ v, b, 30))(jnp.asarray(b))
    np.testing.assert_allclose(x, want, rtol=1e-3, atol=1e-4 * np.abs(want).max())
    assert np.linalg.norm(a @ np.asarray(x, np.float64) - b) < 1e-4 * np.linalg.norm(b)
    # with damping the same solver solves (A + d·I) x = b; a zero right-hand side stays exactly zero
    damped = conjugate_gradient(lambda v: jnp.asarray(a, jnp.float32) @ v + 0.1 * v, jnp.asarray(b), 30)
    np.testing.assert_allclose(damped, np.linalg.solve(a + 0.1 * np.eye(30), b), rtol=1e-3, atol=1e-5)
    np.testing.assert_array_equal(conjugate_gradient(lambda v: v, jnp.zeros(3), 5), np.zeros(3))


# ---- the line search and its tests --------------------------------------------------------------------


def test_line_search_takes_the_first_accepted_fraction_or_none():
    fraction, tries = backtracking_line_search(lambda f: f <= 0.3, 0.5, 10)  # 1, 0.5, 0.25: the third try
    assert float(fraction) == 0.25 and int(tries) == 3
    fraction, tries = backtracking_line_search(lambda f: f <= 1e-9, 0.5, 10)  # 0.5⁹ > 1e-9: none accepted
    assert float(fraction) == 0.0 and int(tries) == 0
    calls = []
    jax.jit(lambda: backtracking_line_search(lambda f: jax.debug.callback(calls.append, f) or f < 2, 0.8, 15))()
    jax.effects_barrier()
    assert len(calls) == 1  # stops at the first accepted try: one evaluation here
    vmapped = jax.vmap(lambda t: backtracking_line_search(lambda f: f <= t, 0.5, 10))(jnp.asarray([1.0, 0.6, 0.1]))
    np.testing.assert_allclose(vmapped[0], [1.0, 0.5, 0.0625])
    np.testing.assert_array_equal(vmapped[1], [1, 2, 5])


def test_trpo_accepts_a_finite_gain_within_the_trust_region():
    gain = f32([0.1, 0.0, -0.1, np.nan, np.inf, 0.1])
    kl = f32([0.01, 0.005, 0.0, 0.0, 0.0, 0.011])
    np.testing.assert_array_equal(trpo_accepts(gain, kl, DELTA), [True, True, False, False, False, False])


def test_cost_checked_accepts_bounds_the_cost_surrogates_rise_by_the_constraint():
    # c = −0.5 (feasible): the cost surrogate may rise by 0.5; c = 0.5 (violated): it must not rise
    gain = f32([0.1, -0.1, -0.1, 0.1, 0.1, 0.1, np.nan])
    cost_change = f32([0.5, 0.4, 0.4, 0.6, 0.0, -0.1, 0.0])
    kl = f32([0.0, 0.0, 0.0, 0.0, 0.02, 0.0, 0.0])
    c = f32([-0.5, -0.5, -0.5, -0.5, -0.5, 0.5, -0.5])
    check = jnp.asarray([True, False, True, True, True, True, True])
    np.testing.assert_array_equal(cost_checked_accepts(gain, cost_change, kl, c, DELTA, check),
                                  [True, True, False, False, False, True, False])
    assert not bool(cost_checked_accepts(f32(0.1), f32(0.01), f32(0.0), f32(0.5), DELTA, False))


# ---- the steps ----------------------------------------------------------------------------------------


def test_trpo_direction_reaches_the_trust_regions_edge():
    h = np.asarray([[2.0, 0.0], [0.0, 8.0]])
    x = np.asarray([3.0, 1.0])
    xhx = x @ h @ x  # 26
    d = np.asarray(trpo_direction(f32(x), f32(xhx), DELTA), np.float64)
    np.testing.assert_allclose(d, math.sqrt(2 * DELTA / 26.0) * x, rtol=1e-6)
    assert 0.5 * d @ h @ d == pytest.approx(DELTA, rel=1e-5)


def test_constraint_value_scales_the_violation_to_the_cost_surrogates_units():
    assert float(constraint_value(f32(0.02), f32(0.4), 1)) == pytest.approx(0.05)
    assert float(constraint_value(f32(0.02), f32(0.4), 500)) == pytest.approx(25.0)


# ---- CPO and PCPO on a quadratic model: max gᵀd s.t. ½dᵀHd ≤ δ, c + bᵀd ≤ 0 --------------------


class Quadratic:
    """A random quadratic model of the surrogates in 6 dimensions, with its exact H⁻¹ products."""

    def __init__(self, seed: int, b_along_g: float = 0.0):
        rng = np.random.default_rng(seed)
        self.h = spd(6, seed + 10)
        self.g = rng.normal(size=6)
        self.b = rng.normal(size=6) + b_along_g * self.g
        self.x, self.p = np.linalg.solve(self.h, self.g), np.linalg.solve(self.h, self.b)
        self.q, self.r, self.s = self.g @ self.x, self.g @ self.p, self.b @ self.p

    def cpo(self, c: float):
        d, stats = cpo_direction(jnp.asarray(self.x), jnp.asarray(self.p), self.q, self.r, self.s, jnp.asarray(c),
                                 DELTA, self.b @ self.b)
        return np.asarray(d, np.float64), int(stats["cpo/case"])

    def solve(self, objective, constraints) -> np.ndarray:
        """The numerical optimum (SLSQP, best of several starts)."""
        optimize = pytest.importorskip("scipy.optimize")
        trust = {"type": "ineq", "fun": lambda d: DELTA - 0.5 * d @ self.h @ d}
        best = None
        for start in np.random.default_rng(0).normal(size=(6, 6)) * 0.01:
            res = optimize.minimize(objective, start, constraints=[trust, *constraints], method="SLSQP",
                                    options={"ftol": 1e-14, "maxiter": 1000})
            if res.success and (best is None or res.fun < best.fun):
                best = res
        assert best is not None
        return best.x

    def best_feasible(self, c: float) -> np.ndarray:
        return self.solve(lambda d: -self.g @ d, [{"type": "ineq", "fun": lambda d: -(c + self.b @ d)}])

    def least_cost(self) -> np.ndarray:
        return self.solve(lambda d: self.b @ d, [])


@pytest.mark.parametrize("case", ["3 feasible, constraint outside", "2 feasible, constraint active",
                                  "1 infeasible, recoverable", "0 infeasible"])
def test_cpo_step_is_the_solution_of_the_quadratic_model(case):
    m = Quadratic(0, b_along_g=1.0)  # r > 0: reward and cost rise together, so the constraint binds
    reach = np.sqrt(2 * DELTA * m.s)  # the most bᵀd can fall inside the trust region
    trpo = np.sqrt(2 * DELTA / m.q) * m.x
    assert m.b @ trpo > 0
    c = {"3": -2.0 * reach, "2": -0.5 * m.b @ trpo, "1": 0.5 * reach, "0": 2.0 * reach}[case[0]]
    d, got_case = m.cpo(c)
    assert got_case == int(case[0])
    want = m.least_cost() if got_case == 0 else m.best_feasible(c)
    np.testing.assert_allclose(d, want, atol=2e-4 * np.linalg.norm(want))
    assert 0.5 * d @ m.h @ d <= DELTA * (1 + 1e-4)
    if got_case == 2:
        assert c + m.b @ d == pytest.approx(0.0, abs=1e-6)  # on the constraint's boundary, not the TRPO step
        assert np.linalg.norm(d - trpo) > 0.1 * np.linalg.norm(trpo)
    if got_case == 3:
        np.testing.assert_allclose(d, trpo, rtol=1e-5)
    if got_case == 0:
        np.testing.assert_allclose(d, -np.sqrt(2 * DELTA / m.s) * m.p, rtol=1e-5)  # the pure cost-reducing step


def test_cpo_with_no_cost_gradient_takes_the_trpo_step():
    m = Quadratic(1)
    d, case = cpo_direction(jnp.asarray(m.x), jnp.zeros(6), m.q, 0.0, 0.0, jnp.asarray(-0.1), DELTA, 0.0)
    assert int(case["cpo/case"]) == 4
    np.testing.assert_allclose(d, trpo_direction(jnp.asarray(m.x), m.q, DELTA), rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pcpo_projection_lands_on_the_constraint_boundary(seed):
    optimize = pytest.importorskip("scipy.optimize")
    m = Quadratic(seed, b_along_g=1.0)
    reward_step = np.sqrt(2 * DELTA / m.q) * m.x
    c = -0.5 * m.b @ reward_step  # the reward step overshoots the linearized constraint
    assert c + m.b @ reward_step > 0
    d, projection = pcpo_direction(jnp.asarray(m.x), jnp.asarray(m.p), m.q, m.r, m.s, jnp.asarray(c), DELTA)
    d = np.asarray(d, np.float64)
    assert float(projection) > 0
    assert c + m.b @ d == pytest.approx(0.0, abs=1e-6)
    # the KL projection: the closest point of the constraint set in the metric H
    res = optimize.minimize(lambda e: 0.5 * (e - reward_step) @ m.h @ (e - reward_step), reward_step,
                            constraints=[{"type": "ineq", "fun": lambda e: -(c + m.b @ e)}], method="SLSQP",
                            options={"ftol": 1e-15, "maxiter": 1000})
    np.testing.assert_allclose(d, res.x, atol=1e-4 * np.linalg.norm(res.x))
    # a reward step inside the constraint is left as it is
    d_inside, projection = pcpo_direction(jnp.asarray(m.x), jnp.asarray(m.p), m.q, m.r, m.s,
                                          jnp.asarray(-2.0 * m.b @ reward_step), DELTA)
    assert float(projection) == 0.0
    np.testing.assert_allclose(d_inside, reward_step, rtol=1e-5)
