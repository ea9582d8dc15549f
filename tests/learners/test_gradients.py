"""crax.learners.shared.gradients: a batch-mean loss and its gradient taken chunk by chunk equal the whole batch's,
and the PPO family's critics use it (``critic_chunk``)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax import runs
from crax.learners import PPOLag
from crax.learners.shared.gradients import chunk_count, chunked_mean, chunked_rows
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv


def _loss(params, batch):
    """A two-layer regression (tanh), mean over rows, with a mean metric: nonlinear in the parameters."""
    h = jnp.tanh(batch["x"] @ params["w1"] + params["b1"])
    err = (h @ params["w2"])[:, 0] - batch["y"]
    return jnp.mean(err**2), {"abs_err": jnp.mean(jnp.abs(err))}


def _problem(rows: int = 48):
    k = iter(jax.random.split(jax.random.key(0), 5))
    params = {"w1": jax.random.normal(next(k), (3, 8)), "b1": jax.random.normal(next(k), (8,)),
              "w2": jax.random.normal(next(k), (8, 1))}
    batch = {"x": jax.random.normal(next(k), (rows, 3)), "y": jax.random.normal(next(k), (rows,))}
    return params, batch


@pytest.mark.parametrize(("rows", "chunk", "expected"), [
    (8192, 1024, 8), (1024, 1024, 1), (1000, 1024, 1), (6000, 1024, 6), (12288, 1024, 12), (48, 16, 3),
    (1031, 1024, 1),  # prime: chunks of one row would be under a quarter of 1024, so whole
    (8192, 8192, 1), (8192, 10**9, 1),
])
def test_chunk_count_is_the_fewest_equal_chunks_not_over_the_size(rows, chunk, expected):
    assert chunk_count(rows, chunk) == expected


@pytest.mark.parametrize("chunks", [1, 2, 3, 6])
def test_chunked_value_metrics_and_gradient_equal_the_whole_batch(chunks):
    params, batch = _problem()
    (whole, whole_m), whole_g = jax.value_and_grad(_loss, has_aux=True)(params, batch)
    (value, metrics), grads = jax.jit(jax.value_and_grad(lambda p, b: chunked_mean(_loss, p, b, chunks),
                                                         has_aux=True))(params, batch)
    np.testing.assert_allclose(value, whole, rtol=1e-6)
    np.testing.assert_allclose(metrics["abs_err"], whole_m["abs_err"], rtol=1e-6)
    for name in params:
        np.testing.assert_allclose(grads[name], whole_g[name], rtol=1e-5, atol=1e-6)
    # Undifferentiated, it is the same value too; the cotangent scales the gradient.
    np.testing.assert_allclose(chunked_mean(_loss, params, batch, chunks)[0], whole, rtol=1e-6)
    g3 = jax.grad(lambda p: 3.0 * chunked_mean(_loss, p, batch, chunks)[0])(params)
    np.testing.assert_allclose(g3["w2"], 3.0 * whole_g["w2"], rtol=1e-5, atol=1e-6)


def test_chunked_gradient_under_vmap_over_parameter_sets():
    params, batch = _problem()
    stacked = jax.tree.map(lambda x: jnp.stack([x, 2.0 * x]), params)
    grads = jax.vmap(jax.grad(lambda p: chunked_mean(_loss, p, batch, 4)[0]))(stacked)
    for i in range(2):
        one = jax.tree.map(lambda x, i=i: x[i], stacked)
        expected = jax.grad(lambda p: _loss(p, batch)[0])(one)
        np.testing.assert_allclose(grads["w1"][i], expected["w1"], rtol=1e-5, atol=1e-6)


def test_chunked_mean_treats_the_batch_as_data_and_names_a_bad_split():
    params, batch = _problem(48)
    g = jax.grad(lambda b: chunked_mean(_loss, params, b, 4)[0])(batch)
    assert not np.any(np.asarray(g["x"])) and not np.any(np.asarray(g["y"]))
    with pytest.raises(ValueError, match=r"5 chunks must divide the batch's rows; its leaves have \[48\]"):
        chunked_mean(_loss, params, batch, 5)


def test_critic_chunk_default_is_1024_rows_on_a_cpu_and_can_be_set():
    config = tiny(PPOLag.Config)
    assert jax.default_backend() == "cpu"
    assert config.critic_chunk_rows(8192) == 1024 and config.critic_chunk_rows(16) == 16
    assert dataclasses.replace(config, critic_chunk=4).critic_chunk_rows(16) == 4
    assert dataclasses.replace(config, critic_chunk=8192).critic_chunk_rows(8192) == 8192
    with pytest.raises(ValueError, match="critic_chunk"):
        tiny(PPOLag.Config, critic_chunk=0)


@pytest.mark.parametrize("budgets", [(), ("cost/hazard=4", "edge=1")])
def test_value_loss_and_critic_gradients_in_chunks_equal_the_whole_minibatch(budgets):
    def learner(chunk):
        return PPOLag(tiny(PPOLag.Config, budgets=budgets, critic_chunk=chunk), 3, 2, 100, rngs=nnx.Rngs(0))

    terms = len(budgets)
    k = iter(jax.random.split(jax.random.key(3), 3))
    mb = {"obs": 3.0 * jax.random.normal(next(k), (32, 3)), "target_r": jax.random.normal(next(k), (32,)),
          "target_c": jax.random.normal(next(k), (32, terms) if terms else (32,))}
    results = []
    for chunk in (32, 8):
        (loss, metrics), grads = nnx.value_and_grad(lambda m: m.value_loss(mb), has_aux=True)(learner(chunk))
        results.append((loss, metrics, grads))
    (loss, metrics, grads), (c_loss, c_metrics, c_grads) = results
    np.testing.assert_allclose(c_loss, loss, rtol=1e-6)
    for name in ("loss/value_reward", "loss/value_cost"):
        np.testing.assert_allclose(c_metrics[name], metrics[name], rtol=1e-6)
    leaves, c_leaves = jax.tree.leaves(nnx.state(grads)), jax.tree.leaves(nnx.state(c_grads))
    assert len(leaves) == len(c_leaves) > 0
    for a, b in zip(leaves, c_leaves, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert float(jnp.abs(grads["reward_critic"]["layers"][0]["kernel"][...]).sum()) > 0


def test_a_training_iteration_with_chunked_critics_matches_the_whole_minibatch(tmp_path):
    results = {}
    for chunk in (16, 4):  # TINY's minibatches are 16 rows: whole, then 4 chunks
        config = tiny(PPOLag.Config, total_steps=64, num_evals=0, critic_chunk=chunk)
        results[chunk] = runs.train(PPOLag, config, ToyEnv(), run_dir=tmp_path / str(chunk), progress=False)
    whole, chunked = (next(r for r in results[c].history if "loss/value_reward" in r) for c in (16, 4))
    for key in ("loss/value_reward", "loss/value_cost", "loss/policy", "loss/total"):
        assert chunked[key] == pytest.approx(whole[key], rel=1e-4, abs=1e-6), key
    for a, b in zip(jax.tree.leaves(results[16].state.model), jax.tree.leaves(results[4].state.model), strict=True):
        if jnp.issubdtype(a.dtype, jnp.floating):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape, chunk", [((6, 8, 5), 16), ((48, 5), 7), ((5,), 2), ((13, 5), 4)])
def test_chunked_rows_is_the_row_wise_function_over_any_leading_axes(shape, chunk):
    x = jax.random.normal(jax.random.key(0), shape)
    w = jax.random.normal(jax.random.key(1), (5, 3))

    def fn(rows):  # row-wise, two outputs of different trailing shapes
        return jnp.tanh(rows @ w), (rows**2).sum(-1)

    got, want = chunked_rows(fn, x, chunk), fn(x)
    for g, e in zip(got, want, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_the_critics_values_of_a_rollout_are_taken_in_chunks_with_the_same_values():
    config = tiny(PPOLag.Config, critic_chunk=4)
    learner = PPOLag(config, 3, 2, 10, rngs=nnx.Rngs(0))
    obs = jax.random.normal(jax.random.key(2), (4, 6, 3))  # 24 rows: 6 chunks of 4
    x = learner.normalize(obs)
    want = (learner.reward_critic(x)[..., 0], learner.cost_critic(x)[..., 0])
    got = learner.values(obs)
    assert "scan" in str(jax.make_jaxpr(lambda o: learner.values(o))(obs))  # the chunks' lax.map
    for g, e in zip(got, want, strict=True):
        assert g.shape == (4, 6)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
