"""``runs.load_policy``: a run folder's trained policy as a jitted ``obs -> action`` (issue 25, item 26)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax import runs
from crax.learners import PPOLag
from tests.learners.conftest import TOY_ENV_ID, tiny


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    config = tiny(PPOLag.Config, total_steps=2 * 64, num_evals=0, num_seeds=2)
    return runs.train(PPOLag, config, TOY_ENV_ID, run_dir=tmp_path_factory.mktemp("p") / "run", progress=False)


@pytest.mark.slow
def test_load_policy_acts_as_each_trained_seed(trained):
    obs = jax.random.uniform(jax.random.key(1), (5, 2), minval=-1, maxval=1)
    for seed in (0, 1):
        act = runs.load_policy(trained.run_dir, seed=seed)
        loc, _ = trained.trainer.learner(trained.state, seed).policy(obs)
        np.testing.assert_allclose(act(obs), jnp.tanh(loc), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(act(obs[2]), act(obs)[2], rtol=1e-5, atol=1e-6)  # one observation or a batch
    assert not np.allclose(runs.load_policy(trained.run_dir, seed=0)(obs), runs.load_policy(trained.run_dir, seed=1)(obs))


def test_load_policy_samples_with_a_key(trained):
    obs = jnp.zeros((4096, 2))
    sample = runs.load_policy(trained.run_dir, deterministic=False)
    a, b = sample(obs, jax.random.key(0)), sample(obs, jax.random.key(1))
    np.testing.assert_array_equal(a, sample(obs, jax.random.key(0)))
    assert not np.allclose(a, b) and float(jnp.abs(a).max()) <= 1.0
    loc, scale = trained.trainer.learner(trained.state, 0).policy(obs[:1])
    u = np.arctanh(np.clip(np.asarray(a), -0.999999, 0.999999))  # the pre-squash samples: mean loc, spread scale
    np.testing.assert_allclose(u.mean(axis=0), loc[0], atol=4 * float(scale.max()) / np.sqrt(len(obs)) + 1e-3)
    with pytest.raises(ValueError, match="needs a key"):
        sample(obs)


def test_load_policy_refuses_a_seed_the_run_did_not_train(trained):
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\)"):
        runs.load_policy(trained.run_dir, seed=2)
