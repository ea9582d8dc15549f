"""The trust-region learners' machinery around the actor: its Fisher-vector products against the explicit
Fisher, per-term budgets refused, the constraint's value c. The step arithmetic alone (CG, the line
search, CPO's and PCPO's closed forms) is test_steps_trust_region.py's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.learners import CPO, CRPO, PCPO, Trainer, TRPOLag
from crax.learners.on_policy.family import IterationBatch
from crax.learners.trust_region.family import PolicySpace, linearize
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnvTwoCosts


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
