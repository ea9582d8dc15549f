"""Hopper: sizes, morphology, observation layout and velocity clip, termination on each health
bound, action scaling and gears, and standing still at reset.

One env is compiled (``compiled("HopperVelocity1")``: its ``reset`` and ``step``); every state is
a reset state with ``qpos``/``qvel`` edited by hand and stepped (see ``planar_checks``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.core.scene import Category
from tests.env.conftest import compiled
from tests.env.planar_checks import (
    check_navigation_suites_reject,
    check_termination,
    expected_obs,
    reset,
    step,
    torso_height,
)

ENV_ID = "HopperVelocity1"
JOINTS = ("thigh", "leg", "foot")
RANGES_DEG = {"thigh": (-150, 0), "leg": (-150, 0), "foot": (-45, 45)}


def env():
    return compiled(ENV_ID).env


def test_sizes_by_eval_shape():
    e = env()
    state = jax.eval_shape(e.reset, jax.random.key(0))
    assert state.obs.shape == (11,)
    assert jax.eval_shape(e.step, state, jnp.zeros(3)).obs.shape == (11,)
    assert e.action_size == 3 and e.observation_size == 11
    assert e.dt == pytest.approx(0.008) and e.mj_model.opt.timestep == pytest.approx(0.002)


def test_morphology():
    m = env().mj_model
    names = [m.joint(j).name.removeprefix("agent/") for j in range(m.njnt)]
    assert names == ["rootx", "rootz", "rooty", *JOINTS]
    assert list(m.jnt_type[:3]) == [2, 2, 3]  # slide, slide, hinge
    for j in JOINTS:
        lo, hi = np.degrees(m.joint("agent/" + j).range)
        assert (lo, hi) == pytest.approx(RANGES_DEG[j], abs=0.01), j
    np.testing.assert_array_equal(m.actuator_gear[:, 0], 200.0)
    np.testing.assert_array_equal(m.actuator_ctrlrange, [[-1.0, 1.0]] * 3)
    assert [m.joint(int(t)).name.removeprefix("agent/") for t in m.actuator_trnid[:, 0]] == list(JOINTS)
    # only the foot collides, and as agent geoms (floor, hazards, walls; never each other)
    colliding = [m.geom(g).name for g in range(m.ngeom) if m.geom_contype[g] and m.geom(g).name.startswith("agent/")]
    assert colliding == ["agent/foot"]
    assert all(m.geom(g).contype == Category.AGENT for g in colliding)
    assert m.qpos0[1] == pytest.approx(1.25)  # rootz ref: the coordinate is the torso height


def test_reset_noise_and_standing_still():
    e = env()
    q0 = np.asarray(e.mj_model.qpos0)
    s = reset(ENV_ID, seed=1)
    assert np.all(np.abs(s.data.qpos - q0) <= 0.005 + 1e-6) and np.std(s.data.qpos - q0) > 1e-3
    assert np.all(np.abs(s.data.qvel) <= 0.005 + 1e-6) and np.std(s.data.qvel) > 1e-3
    np.testing.assert_allclose(s.obs, expected_obs(s.data), atol=1e-6)
    for _ in range(25):  # 0.2 s with zero action: lands on its feet and stays upright
        s = step(ENV_ID, s)
        assert s.done == 0.0 and s.metrics["reward/healthy"] == 1.0
    assert 1.1 < s.data.qpos[1] < 1.3 and abs(s.data.qpos[2]) < 0.1


def test_observation_layout_and_finite_under_random_actions():
    s = reset(ENV_ID, seed=2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = rng.uniform(-1, 1, 3).astype(np.float32)
        s = step(ENV_ID, s, action=a)
        assert np.all(np.isfinite(s.data.qpos)) and np.all(np.isfinite(s.data.qvel))
        np.testing.assert_allclose(s.obs, expected_obs(s.data), atol=1e-6)
        assert s.obs[0] == pytest.approx(torso_height(ENV_ID, s.data.qpos), abs=1e-5)  # obs[0] is the torso height
        assert s.metrics["reward/ctrl"] == pytest.approx(-0.001 * np.sum(a**2), rel=1e-5)


def test_velocity_clip():
    e = env()
    s = reset(ENV_ID)
    qvel = np.zeros(6, np.float32)
    qvel[0], qvel[1], qvel[3] = -30.0, 30.0, 30.0  # backwards, upwards (off the floor), thigh swing
    out = step(ENV_ID, s, qvel=qvel)
    v = out.data.qvel
    assert v[0] < -10.0 and v[1] > 10.0  # still beyond the clip after the step
    np.testing.assert_allclose(out.obs[5:], np.clip(v, -10, 10), atol=1e-6)
    assert out.obs[5] == -10.0 and out.obs[6] == 10.0
    # and on observe directly, with hand-built velocities
    data = jax.tree.map(jnp.asarray, s.data).replace(qvel=jnp.linspace(-20.0, 20.0, 6))
    np.testing.assert_allclose(e.body.observe(data)[5:], np.clip(np.linspace(-20, 20, 6), -10, 10), atol=1e-6)


def test_termination():
    check_termination(
        ENV_ID,
        [
            ("healthy", 1.25, 0.0, False),
            ("healthy, near the bounds", 0.75, 0.15, False),
            ("healthy, high (no upper bound), pitched back", 3.0, -0.15, False),
            ("too low", 0.65, 0.0, True),
            ("pitched forward", 1.3, 0.25, True),
            ("pitched back", 1.3, -0.25, True),
        ],
    )


def test_action_scaling_and_gears():
    e = env()
    m = e.mj_model
    s = reset(ENV_ID)
    action = np.array([0.5, 1.7, -3.0], np.float32)  # the last two are clipped
    out = step(ENV_ID, s, action=action)
    ctrl = np.clip(action, -1, 1)  # ctrlrange ±1
    np.testing.assert_allclose(out.data.ctrl, ctrl, rtol=1e-6)
    np.testing.assert_allclose(e.body.ctrl(jnp.asarray(action)), ctrl, rtol=1e-6)
    dofs = [int(m.jnt_dofadr[int(t)]) for t in m.actuator_trnid[:, 0]]
    np.testing.assert_allclose(out.data.qfrc_actuator[dofs], 200.0 * ctrl, rtol=1e-5)
    np.testing.assert_array_equal(out.data.qfrc_actuator[:3], 0.0)  # no motor on the root


def test_goal_suites_reject_hopper():
    check_navigation_suites_reject("Hopper")
