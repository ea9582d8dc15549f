"""The C MuJoCo ceiling of ``crax bench``: MuJoCo's rollout of the env's physics model from the env's states."""

import types

import jax
import mujoco
import numpy as np
import pytest

import crax
from crax.bench_ceiling import FULL, Ceiling, env_steps_per_s, unavailable
from crax.core.env import wrap_for_training

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


def by_hand(env, data, i: int, actions: np.ndarray) -> np.ndarray:
    """Env ``i`` of ``data`` stepped with ``mujoco.mj_step``, each action held for ``frame_skip`` steps."""
    m = env.mj_model
    d = mujoco.MjData(m)
    d.time = float(np.asarray(data.time)[i])
    for name in ("qpos", "qvel", "act", "mocap_pos", "mocap_quat", "qacc_warmstart"):
        getattr(d, name)[:] = np.asarray(getattr(data, name))[i]
    for a in actions:
        d.ctrl[:] = np.asarray(env.body.ctrl(a), np.float64)
        for _ in range(env.body.frame_skip):
            mujoco.mj_step(m, d)
    out = np.empty(mujoco.mj_stateSize(m, FULL))
    mujoco.mj_getState(m, d, out, FULL)
    return out


def test_env_steps_per_s_counts_frame_skip_physics_steps_as_one_env_step():
    assert env_steps_per_s(4000, 4, 2.0) == 500.0
    assert env_steps_per_s(4000, 1, 2.0) == 2000.0


@pytest.mark.slow
def test_rollout_steps_the_env_model_from_the_env_reset_states():
    env = crax.make("PointCircle1")
    data = jax.jit(wrap_for_training(env, 3).reset)(jax.random.key(1)).data
    actions = np.random.default_rng(0).uniform(-1.0, 1.0, (3, 2, env.action_size))
    with Ceiling(env, data, steps=2, actions=actions, threads=2) as c:
        assert c.model is env.physics_model.mj_model
        final, seconds = c.run()
        rate, stopped = c.timed()
    assert seconds > 0 and rate > 0 and stopped == 0
    np.testing.assert_array_equal(c.physics_steps(final), [2 * env.body.frame_skip] * 3)
    for i in range(3):
        # bitwise: the same C physics, state, warm start and held controls
        np.testing.assert_array_equal(final[i], by_hand(env, data.physics, i, actions[i]))
    assert not np.allclose(final[:, 1:], c.state0[:, 1:])  # it moved


def test_rollout_uses_each_env_mocap_layout():
    """Two envs alike but for one collidable pillar (a mocap body) moved onto the agent in the second."""
    env = crax.make("PointGoal2")
    m = env.mj_model
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    pillar = m.body_mocapid[m.body("cylinder_pillars/0").id]
    mocap_pos = np.stack([d.mocap_pos, d.mocap_pos])
    mocap_pos[1, pillar] = [0.25, 0.0, 0.2]
    batch = {"time": np.zeros(2), "qpos": np.stack([d.qpos] * 2), "qvel": np.stack([d.qvel] * 2), "act": np.zeros((2, m.na)),
             "mocap_pos": mocap_pos, "mocap_quat": np.stack([d.mocap_quat] * 2), "qacc_warmstart": np.zeros((2, m.nv))}
    data = types.SimpleNamespace(**batch)
    actions = np.zeros((2, 3, env.action_size))
    with Ceiling(env, data, steps=3, actions=actions, threads=1) as c:
        final, _ = c.run()
    # C steps the physics model (no zones, no goal) and lands where stepping the whole scene does
    assert c.model is env.physics_model.mj_model and c.model.nbody < m.nbody
    with Ceiling(env, data, steps=3, actions=actions, threads=1, whole_scene=True) as scene:
        assert scene.model is m
        np.testing.assert_array_equal(scene.run()[0], final)
    np.testing.assert_array_equal(final[0], by_hand(env, data, 0, actions[0]))
    np.testing.assert_array_equal(final[1], by_hand(env, data, 1, actions[1]))
    assert not np.allclose(final[0], final[1])  # the pillar pushed the agent


def test_actions_of_the_wrong_shape_are_refused():
    env = crax.make("PointCircle1")
    m = env.mj_model
    d = mujoco.MjData(m)
    data = types.SimpleNamespace(time=np.zeros(2), qpos=np.stack([d.qpos] * 2), qvel=np.zeros((2, m.nv)),
                                 act=np.zeros((2, m.na)), mocap_pos=np.zeros((2, m.nmocap, 3)),
                                 mocap_quat=np.zeros((2, m.nmocap, 4)), qacc_warmstart=np.zeros((2, m.nv)))
    with pytest.raises(ValueError, match=r"expected \(2, 4, 2\)"):
        Ceiling(env, data, steps=4, actions=np.zeros((2, 3, 2)))
