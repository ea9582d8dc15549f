"""HalfCheetahVelocity: one ``jit(vmap)`` rollout with random actions checks the observation layout,
the forward velocity, the reward and the hinge cost step by step, and that everything stays finite.

The threshold is lowered to 0.2 m/s (``velocity_threshold`` override) so that random actions cross
it both ways; the level thresholds and the binary mode are checked in ``test_make.py`` and
``test_costs.py``.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import crax
from crax.core.env import Vmap

N_ENVS, T, TAU = 4, 30, 0.2


@functools.cache
def rollout():
    env = crax.make("HalfCheetahVelocity1", cost_mode="hinge", velocity_threshold=TAU)
    batched = Vmap(env, N_ENVS)
    torso = env.body.torso_id

    @jax.jit
    def run(key):
        k0, k1 = jax.random.split(key)
        state = batched.reset(k0)

        def body(state, k):
            action = jax.random.uniform(k, (N_ENVS, env.action_size), minval=-1.0, maxval=1.0)
            nxt = batched.step(state, action)
            out = {
                "action": action, "obs": nxt.obs, "reward": nxt.reward, "cost": nxt.cost, "done": nxt.done,
                "metrics": nxt.metrics, "qpos": nxt.data.qpos, "qvel": nxt.data.qvel,
                "x_before": state.data.xpos[:, torso, 0], "x_after": nxt.data.xpos[:, torso, 0],
            }
            return nxt, out

        _, traj = jax.lax.scan(body, state, jax.random.split(k1, T))
        return state.obs, state.data.qpos, traj

    obs0, qpos0, traj = run(jax.random.key(11))
    return env, np.asarray(obs0), np.asarray(qpos0), jax.tree.map(np.asarray, traj)


@pytest.mark.slow
def test_rollout_stays_finite():
    _, obs0, _, traj = rollout()
    assert obs0.shape == (N_ENVS, 18)
    assert traj["obs"].shape == (T, N_ENVS, 18)
    for k in ("obs", "reward", "cost", "qpos", "qvel"):
        assert np.all(np.isfinite(traj[k])), k
    assert np.all(traj["done"] == 0)  # HalfCheetah never terminates; episode_length 1000
    assert not np.allclose(traj["obs"][:, 0], traj["obs"][:, 1])  # envs differ


def test_reset_noise_and_observation_layout():
    env, obs0, qpos0, traj = rollout()
    assert np.all(np.abs(qpos0 - np.asarray(env.mj_model.qpos0)) <= 0.1 + 1e-6)  # uniform +-0.1
    assert np.std(qpos0 - np.asarray(env.mj_model.qpos0)) > 0.01
    # qpos without root x (8), qvel (9), root z (the rootz slide)
    want = np.concatenate([traj["qpos"][..., 1:], traj["qvel"], traj["qpos"][..., 1:2]], axis=-1)
    np.testing.assert_allclose(traj["obs"], want, rtol=1e-6, atol=1e-6)


def test_velocity_reward_and_hinge_cost_per_step():
    env, _, _, traj = rollout()
    m = traj["metrics"]
    v = (traj["x_after"] - traj["x_before"]) / env.dt  # signed forward velocity of the torso
    np.testing.assert_allclose(m["velocity"], v, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m["reward/forward"], v, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(traj["cost"], np.maximum(0.0, m["velocity"] - TAU), rtol=1e-5, atol=1e-6)
    # the step's cost is its one term; XLA may compute that term in two fusions, a rounding apart
    np.testing.assert_allclose(m["cost/velocity"], traj["cost"], rtol=1e-6, atol=1e-7)
    assert np.any(m["velocity"] > TAU) and np.any(m["velocity"] < TAU)  # both sides of the threshold
    ctrl = -0.1 * np.sum(traj["action"] ** 2, axis=-1)
    np.testing.assert_allclose(m["reward/ctrl"], ctrl, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(m["reward/healthy"], 0.0)
    np.testing.assert_allclose(m["base_reward"], m["reward/forward"] + ctrl, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(traj["reward"], 0.01 * m["base_reward"], rtol=1e-5, atol=1e-7)
