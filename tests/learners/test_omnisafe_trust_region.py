"""crax's trust-region actor steps against OmniSafe 0.5's own updates on one fixed batch
(``tests/learners/data/omnisafe/trust_region.json``, written by ``benchmarks/omnisafe/trust_region.py``):
OmniSafe's ``GaussianLearningActor`` (hidden [4], tanh) and its parameters loaded into a crax actor
with ``activation="tanh"``, ``actor_std="parameter"``, then x = H⁻¹g, xᵀHx, the step, CPO's case and
dual variables, PCPO's projection, the line search's accepted try and the new parameters compared.

The updates are compared with crax's conjugate gradient given OmniSafe's 1e-6 in its denominators
(crax's own has none and solves exactly: decision 78, tested below). Where crax deliberately differs
(decision 78: CPO's r is taken along the loss gradient, PCPO steps along x = H⁻¹g, not H·x), the test
checks that crax's update is OmniSafe's own with that one term corrected (the recorder ran OmniSafe's
line search on the corrected direction), and that it is not OmniSafe's update as OmniSafe ships it."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from jax.flatten_util import ravel_pytree

import crax.learners.trust_region.family as trust_region
from crax.learners import CPO, CRPO, PCPO, TRPOLag
from crax.learners.on_policy.family import IterationBatch
from crax.learners.trust_region.cpo import cpo_direction
from crax.learners.trust_region.family import (
    PolicySpace,
    TrustRegionPPO,
    conjugate_gradient,
    cost_checked_step,
    linearize,
    trpo_direction,
)
from crax.learners.trust_region.pcpo import pcpo_direction
from tests.learners.conftest import tiny
from tests.learners.omnisafe_data import load

T = 1000  # episode length: crax's violation v is OmniSafe's EpCost − limit over T

RTOL = 1e-4  # float32 rounding through 15 CG iterations in torch and in XLA

OMNISAFE_CG_EPS = 1e-6
"""What OmniSafe's ``conjugate_gradients`` adds to both step sizes' denominators (crax: 0, decision 78)."""


@functools.cache
def record() -> dict:
    return load("trust_region")


def make(cls, **overrides):
    """A crax learner of ``cls`` with OmniSafe's actor (hidden [4], tanh, learned log-std) and its
    recorded parameters."""
    config = tiny(cls.Config, actor_hidden=(4,), activation="tanh", actor_std="parameter",
                  normalize_observations=False, **overrides)
    learner = cls(config, 3, 2, T, rngs=nnx.Rngs(0))
    load_actor(learner, record()["theta0"])
    return learner


@pytest.fixture(autouse=True)
def omnisafe_cg(monkeypatch) -> Iterator[None]:
    """The learners' CG with OmniSafe's ``eps``, so that whole updates compare to float rounding."""
    monkeypatch.setattr(trust_region, "conjugate_gradient",
                        functools.partial(conjugate_gradient, eps=OMNISAFE_CG_EPS))
    yield


def torch_parts(flat: np.ndarray) -> dict[str, np.ndarray]:
    """OmniSafe's flat parameter vector cut into its named tensors (``get_flat_params_from``'s order)."""
    parts, at = {}, 0
    for entry in record()["layout"]:
        shape = tuple(int(n) for n in entry["shape"])
        size = int(np.prod(shape))
        parts[entry["name"]] = np.asarray(flat[at:at + size]).reshape(shape)
        at += size
    assert at == flat.size
    return parts


def load_actor(learner, flat: np.ndarray) -> None:
    """Sets the crax actor to OmniSafe's parameters (torch's ``Linear.weight`` is (out, in): the transpose
    of ``nnx.Linear.kernel``)."""
    p = torch_parts(flat)
    first, last = learner.actor.net.layers
    first.kernel[...], first.bias[...] = p["mean.0.weight"].T, p["mean.0.bias"]
    last.kernel[...], last.bias[...] = p["mean.2.weight"].T, p["mean.2.bias"]
    learner.actor.log_std[...] = p["log_std"]


def to_crax(learner, flat: np.ndarray) -> jax.Array:
    """A vector in OmniSafe's parameter space (parameters, a gradient, a step) in crax's flat order."""
    clone = nnx.clone(learner)
    load_actor(clone, flat)
    return ravel_pytree(nnx.state(clone.actor, nnx.Param))[0]


def batch(c: float = 0.0, cost_sign: float = 1.0) -> IterationBatch:
    """The recorded batch with OmniSafe's EpCost − limit = c as crax's v = c/T (cost advantages centred:
    ``cost_scale`` 1)."""
    b = record()["batch"]
    samples = {"obs": jnp.asarray(b["obs"]), "u": jnp.asarray(b["act"]), "logp": jnp.asarray(b["logp"]),
               "adv_r": jnp.asarray(b["adv_r"]), "adv_c": cost_sign * jnp.asarray(b["adv_c"])}
    return IterationBatch(samples=samples, violation=jnp.asarray(c / T, jnp.float32), cost_scale=jnp.ones(()))


def close(got, want, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol + RTOL * np.abs(want).max())


def check_update(learner, want: dict, step: jax.Array, stats: dict) -> None:
    """crax's accepted step and try against OmniSafe's new parameters and ``Misc/AcceptanceStep``."""
    space = PolicySpace(learner, batch().samples)
    assert int(stats["trust_region/accepted_step"]) == int(want["AcceptanceStep"])
    close(space.theta + step, to_crax(learner, want["theta"]))


def test_omnisafe_settings_are_craxs_defaults():
    settings = record()["settings"]
    for name, cls in (("TRPO", TrustRegionPPO), ("TRPOLag", TRPOLag), ("CPO", CPO), ("PCPO", PCPO), ("OnCRPO", CRPO)):
        config = cls.Config()
        assert settings[name]["target_kl"] == pytest.approx(config.target_kl)
        assert settings[name]["cg_iters"] == config.cg_iterations
        assert settings[name]["cg_damping"] == pytest.approx(config.cg_damping)
        assert settings[name]["fvp_sample_freq"] == 1  # OmniSafe's Fisher on every state, as crax's
    assert settings["OnCRPO_distance"] == pytest.approx(CRPO.Config().distance)


def test_omnisafe_natural_pg_step():
    want = record()["natural_pg"]
    learner = make(TrustRegionPPO)
    space = PolicySpace(learner, batch().samples)
    g = jax.grad(lambda th: space.surrogate(th, batch().samples["adv_r"]))(space.theta)
    close(g, to_crax(learner, want["g"]))
    fvp = space.fisher(learner.config.cg_damping)
    x = conjugate_gradient(fvp, g, learner.config.cg_iterations, eps=OMNISAFE_CG_EPS)
    close(x, to_crax(learner, want["x"]))
    xhx = x @ fvp(x)
    assert float(xhx) == pytest.approx(float(want["xHx"]), rel=RTOL)
    assert float(jnp.sqrt(2 * learner.config.target_kl / xhx)) == pytest.approx(float(want["Alpha"]), rel=RTOL)
    close(space.theta + trpo_direction(x, xhx, learner.config.target_kl), to_crax(learner, want["theta"]))


@pytest.mark.parametrize("name", ["trpo", "trpo_lag"])
def test_omnisafe_trpo_update(name):
    want = record()[name]
    if name == "trpo":
        learner = make(TrustRegionPPO)
    else:
        learner = make(TRPOLag)
        learner.rule.lagrange[...] = jnp.full_like(learner.rule.lagrange[...], record()["settings"]["trpo_lag_lambda"])
    space = PolicySpace(learner, batch().samples)
    step, stats = learner.actor_step(space, batch())
    check_update(learner, want, step, stats)
    assert float(stats["policy/kl"]) == pytest.approx(float(want["KL"]), rel=1e-3)


def test_omnisafe_cg_eps_stalls_the_solve_and_craxs_does_not():
    # the documented difference: OmniSafe's eps (1e-6) in CG's denominators; crax's eps 0 solves
    # (F + damping·I) x = g to float rounding in the same 15 iterations
    want = record()["natural_pg"]
    learner = make(TrustRegionPPO)
    space = PolicySpace(learner, batch().samples)
    fvp = space.fisher(learner.config.cg_damping)
    g = to_crax(learner, want["g"])
    exact = np.linalg.solve(np.asarray(jax.vmap(fvp)(jnp.eye(g.size)), np.float64).T, np.asarray(g, np.float64))
    crax_error = np.abs(conjugate_gradient(fvp, g, learner.config.cg_iterations) - exact).max()
    omnisafe_error = np.abs(to_crax(learner, want["x"]) - exact).max()
    assert crax_error < 1e-5 * np.abs(exact).max() < 0.1 * omnisafe_error


def cpo_record(case: int, cost_sign: float = 1.0) -> dict:
    (rec,) = [r for r in record()["cpo"] if int(r["OptimCase"]) == case and float(r["cost_sign"]) == cost_sign]
    return rec


def check_linearized(learner, lin, want: dict) -> None:
    """crax's x = H⁻¹g, p = H⁻¹b, q, r, s against OmniSafe's."""
    close(lin.x, to_crax(learner, want["x"]))
    close(lin.p, to_crax(learner, want["p"]))
    for name in ("q", "r", "s"):
        assert float(getattr(lin, name)) == pytest.approx(float(want[name]), rel=RTOL), name


@pytest.mark.parametrize(("case", "cost_sign"), [(3, 1.0), (0, 1.0)], ids=["case 3", "case 0"])
def test_omnisafe_cpo_update_where_the_sign_of_r_does_not_enter(case, cost_sign):
    want = cpo_record(case, cost_sign)
    learner = make(CPO)
    data = batch(float(want["c"]), cost_sign)
    space = PolicySpace(learner, data.samples)
    check_linearized(learner, linearize(learner, space, data), want)
    step, stats = learner.actor_step(space, data)
    assert int(stats["cpo/case"]) == case
    assert float(stats["cpo/lambda"]) == pytest.approx(float(want["Lambda_star"]), rel=RTOL)
    assert float(stats["cpo/nu"]) == pytest.approx(float(want["Nu_star"]), rel=RTOL)
    check_update(learner, want, step, stats)


@pytest.mark.parametrize(("case", "cost_sign"), [(2, 1.0), (1, -1.0)], ids=["case 2, r > 0", "case 1, r < 0"])
def test_omnisafe_cpo_update_is_omnisafes_with_r_along_the_loss_gradient(case, cost_sign):
    # decision 78: OmniSafe's _step_direction puts r = gᵀH⁻¹b of the reward gradient g where Achiam et
    # al.'s dual takes it along the loss gradient (−r); the recorder ran OmniSafe's own _step_direction
    # with r negated and its own line search on that direction: crax's update is that one
    want = cpo_record(case, cost_sign)
    learner = make(CPO)
    data = batch(float(want["c"]), cost_sign)
    space = PolicySpace(learner, data.samples)
    step, stats = learner.actor_step(space, data)
    assert int(stats["cpo/case"]) == case
    corrected = want["r_negated"]
    assert float(stats["cpo/lambda"]) == pytest.approx(float(corrected["Lambda_star"]), rel=RTOL)
    assert float(stats["cpo/nu"]) == pytest.approx(float(corrected["Nu_star"]), rel=RTOL)
    check_update(learner, corrected, step, stats)
    # ... and not OmniSafe's update as it ships: a different λ, and a different (here: no) step
    assert int(want["AcceptanceStep"]) != int(corrected["AcceptanceStep"])
    assert not np.allclose(space.theta + step, to_crax(learner, want["theta"]), rtol=1e-2, atol=1e-3)


def test_omnisafe_cpo_case_1_with_omnisafes_sign_is_craxs_formula_on_minus_r():
    # case 1 (violated, recoverable) with reward and cost rising together (r > 0): with OmniSafe's sign ν*
    # is 0, its direction the TRPO step, which raises the cost and no try is accepted; crax's closed form
    # and line search given −r reproduce that, and with its own sign crax steps and lowers the cost
    want = cpo_record(1)
    assert float(want["r"]) > 0 and int(want["AcceptanceStep"]) == 0 and float(want["Nu_star"]) == 0.0
    learner = make(CPO)
    data = batch(float(want["c"]))
    space = PolicySpace(learner, data.samples)
    lin = linearize(learner, space, data)
    check_linearized(learner, lin, want)
    direction, stats = cpo_direction(lin.x, lin.p, lin.q, -lin.r, lin.s, lin.c, learner.config.target_kl,
                                     lin.b @ lin.b)
    step, search = cost_checked_step(learner, space, lin, direction, check_reward=False)
    assert float(stats["cpo/lambda"]) == pytest.approx(float(want["Lambda_star"]), rel=RTOL)
    assert float(stats["cpo/nu"]) == float(want["Nu_star"])
    check_update(learner, want, step, search)

    step, stats = learner.actor_step(space, data)
    assert float(stats["cpo/lambda"]) > 0 and float(stats["cpo/nu"]) > 0
    assert int(stats["trust_region/accepted_step"]) == 1  # the full step, onto the linearized boundary:
    assert float(lin.c + lin.b @ step) == pytest.approx(0.0, abs=1e-2 * float(lin.c))  # CG with OmniSafe's eps
    assert float(stats["trust_region/cost_surrogate_change"]) < 0


@pytest.mark.parametrize("which", [0, 1], ids=["reward step inside the constraint", "projected"])
def test_omnisafe_pcpo_update_is_omnisafes_along_x_not_hx(which):
    # decision 78: OmniSafe's PCPO steps along sqrt(2δ/q)·H·x (its H_inv_g = _fvp(x) ≈ g), the paper
    # along sqrt(2δ/q)·x = sqrt(2δ/q)·H⁻¹g; the recorder ran OmniSafe's line search on the paper's step
    want = record()["pcpo"][which]
    learner = make(PCPO)
    data = batch(float(want["c"]))
    space = PolicySpace(learner, data.samples)
    lin = linearize(learner, space, data)
    check_linearized(learner, lin, want)
    step, stats = learner.actor_step(space, data)
    assert float(stats["pcpo/projection"]) == pytest.approx(float(want["projection"]), rel=RTOL, abs=1e-7)
    check_update(learner, want["x_not_hx"], step, stats)
    # OmniSafe's own update is crax's projection and line search on H·x in place of x
    fvp = space.fisher(learner.config.cg_damping)
    direction, _ = pcpo_direction(fvp(lin.x), lin.p, lin.q, lin.r, lin.s, lin.c, learner.config.target_kl)
    omnisafe_step, search = cost_checked_step(learner, space, lin, direction, check_reward=False)
    check_update(learner, want, omnisafe_step, search)
    assert not np.allclose(step, omnisafe_step, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("which", [0, 1], ids=["within the tolerance: reward", "past it: cost"])
def test_omnisafe_crpo_update(which):
    want = record()["crpo"][which]
    assert int(want["cost_update"]) == which
    learner = make(CRPO)
    data = batch(float(want["c"]))
    space = PolicySpace(learner, data.samples)
    step, stats = learner.actor_step(space, data)
    check_update(learner, want, step, stats)
    assert float(stats["policy/kl"]) == pytest.approx(float(want["KL"]), rel=1e-3)
