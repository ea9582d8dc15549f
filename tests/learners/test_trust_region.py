"""The trust-region machinery on known answers: CG on a random SPD system, Fisher-vector products
against the explicit Fisher, the line search, CPO's closed form against a numerical solution of the
same quadratic model in each case, PCPO's projection onto the constraint's boundary."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.learners import CPO, CRPO, PCPO, Trainer, TRPOLag
from crax.learners.on_policy.family import IterationBatch
from crax.learners.trust_region.cpo import cpo_direction
from crax.learners.trust_region.family import (
    PolicySpace,
    backtracking_line_search,
    conjugate_gradient,
    linearize,
    trpo_direction,
)
from crax.learners.trust_region.pcpo import pcpo_direction
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnvTwoCosts

optimize = pytest.importorskip("scipy.optimize")

DELTA = 0.01


def spd(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n, n))
    return m @ m.T / n + 0.5 * np.eye(n)


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


def tiny_space(seed: int = 0) -> PolicySpace:
    """A TRPO-Lag learner with a 3-8-8-4 actor, its parameters moved off their init, on 24 states."""
    learner = TRPOLag(tiny(TRPOLag.Config, actor_hidden=(8, 8), normalize_observations=False), 3, 2, 100,
                      rngs=nnx.Rngs(seed))
    keys = jax.random.split(jax.random.key(seed), 3)
    space = PolicySpace(learner, {"obs": jnp.zeros((1, 3)), "u": jnp.zeros((1, 2)), "logp": jnp.zeros(1)})
    nnx.update(learner.actor, space.params(space.theta + 0.3 * jax.random.normal(keys[0], space.theta.shape)))
    obs = jax.random.normal(keys[1], (24, 3))
    loc, scale = learner.policy(obs)
    u = loc + scale * jax.random.normal(keys[2], loc.shape)
    return PolicySpace(learner, {"obs": obs, "u": u, "logp": jnp.zeros(24)})


def test_fisher_vector_product_equals_the_explicit_fisher_times_a_vector():
    space = tiny_space()
    fisher = jax.jit(jax.hessian(space.kl))(space.theta)  # the mean KL's Hessian at π_old: the Fisher, materialized
    assert fisher.shape == (space.theta.size,) * 2 and space.theta.size > 100
    np.testing.assert_allclose(fisher, fisher.T, atol=1e-6 * float(jnp.abs(fisher).max()))
    fvp = jax.jit(lambda v, damping: space.fisher(damping)(v))
    vs = jax.random.normal(jax.random.key(9), (4, space.theta.size))
    for v in vs:
        want = fisher @ v
        np.testing.assert_allclose(fvp(v, 0.0), want, rtol=1e-4, atol=1e-5 * float(jnp.abs(want).max()))
        np.testing.assert_allclose(fvp(v, 0.1), want + 0.1 * v, rtol=1e-4, atol=1e-5 * float(jnp.abs(want).max()))
        assert float(v @ fvp(v, 0.0)) > 0  # a Fisher is positive semidefinite


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


def test_cpo_and_pcpo_refuse_per_term_budgets_at_construction():
    for cls in (CPO, PCPO):
        with pytest.raises(ValueError, match=rf"learner '{cls.name}' keeps no per-term multipliers.*trpo-lag"):
            Trainer(cls, tiny(cls.Config, budgets=("cost/hazard=4",)), ToyEnvTwoCosts())


@pytest.mark.parametrize("cls", [CPO, PCPO], ids=lambda c: c.name)
def test_constraint_value_per_step_or_per_episode(cls):
    # per-step: c = v / cost_scale (the cost surrogate's units); episode: c = T·v / cost_scale (OmniSafe's
    # EpCost − d beside cost advantages that are centered, not divided by their scale)
    obs = jax.random.normal(jax.random.key(0), (16, 3))
    samples = {"obs": obs, "u": jnp.zeros((16, 2)), "logp": jnp.zeros(16), "adv_r": jnp.ones(16),
               "adv_c": jnp.linspace(-1.0, 1.0, 16)}
    batch = IterationBatch(samples=samples, violation=jnp.asarray(0.02), cost_scale=jnp.asarray(0.4))
    got = {}
    for value in ("per-step", "episode"):
        learner = cls(tiny(cls.Config, actor_hidden=(8,), constraint_value=value), 3, 2, 500, rngs=nnx.Rngs(0))
        lin = linearize(learner, PolicySpace(learner, samples), batch)
        got[value] = float(lin.c)
    assert got == pytest.approx({"per-step": 0.02 / 0.4, "episode": 0.02 * 500 / 0.4})
    with pytest.raises(ValueError, match="'constraint_value' must be one of per-step, episode, got 'window'"):
        tiny(cls.Config, constraint_value="window")



def test_runs_stored_before_constraint_value_read_as_per_step():
    # decision 67 made `episode` the default; a run stored without the field ran with the per-step c
    from crax.runs.checkpoint import config_from_dict

    for cls in (CPO, PCPO):
        assert cls.Config().constraint_value == "episode"
        assert config_from_dict(cls.Config, {"target_kl": 0.02}).constraint_value == "per-step"
        assert config_from_dict(cls.Config, {"constraint_value": "episode"}).constraint_value == "episode"
    assert not hasattr(TRPOLag.Config, "constraint_value")
    # decision 78 gave CRPO OmniSafe's tolerance; a run stored before switched at the bound itself
    assert CRPO.Config().distance == 2.0 and config_from_dict(CRPO.Config, {}).distance == 0.0
