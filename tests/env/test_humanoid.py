"""Humanoid: observation layout (against MuJoCo C for the contact forces), sizes, termination, action
scaling, gears and the centre-of-mass locomotion point.

One env is compiled (``compiled("HumanoidVelocity1")``: its ``reset`` and ``step``). The tested
state is a reset with the body lowered 0.11 m, so both feet press into the floor, then one
``env.step`` with a fixed action: at that state ``cfrc_ext`` has non-zero rows (the feet), so the
contact-force check can fail. Every other state is the same one with ``qpos`` edited by hand
and stepped once more (``step`` recomputes every derived quantity from qpos/qvel).

``cfrc_ext`` is checked against a reference built by hand from the raw contacts of the same
state: each penetrating contact's pyramid forces are decoded (normal = sum of the facet forces,
tangent i = mu_i (f+_i - f-_i)), rotated out of the contact frame and moved from the contact point
to the subtree centre of mass of the body's root, as MuJoCo documents ``cfrc_ext`` (torque, force).
That checks MJX's contact-to-body force mapping as well as the row selection. (``mjx.get_data``
plus ``mujoco.mj_rnePostConstraint`` was the reference once; ``get_data`` counts constraint rows
by non-zero Jacobian rows and, on some CPUs, read past the rows it kept.)
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from tests.env.conftest import compiled

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

ENV_ID = "HumanoidVelocity1"
ACTION = np.linspace(-0.9, 0.9, 17).astype(np.float32)

# Gymnasium's Humanoid gears, by joint name.
GEARS = {
    "abdomen_y": 100, "abdomen_z": 100, "abdomen_x": 100,
    "right_hip_x": 100, "right_hip_z": 100, "right_hip_y": 300, "right_knee": 200,
    "left_hip_x": 100, "left_hip_z": 100, "left_hip_y": 300, "left_knee": 200,
    "right_shoulder1": 25, "right_shoulder2": 25, "right_elbow": 25,
    "left_shoulder1": 25, "left_shoulder2": 25, "left_elbow": 25,
}

# obs = qpos[2:] 22, qvel 23, cinert 14x10, cvel 14x6, qfrc_actuator 23, cfrc_ext 14x6
SLICES = dict(qpos=(0, 22), qvel=(22, 45), cinert=(45, 185), cvel=(185, 269), qfrc_actuator=(269, 292), cfrc_ext=(292, 376))


def host(tree):
    """Numpy copies of every array leaf (PRNG keys stay JAX arrays)."""
    return jax.tree.map(lambda x: x if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else np.asarray(x), tree)


@functools.cache
def env_and_states():
    """(env, reset state, stepped contact state), states as numpy pytrees."""
    c = compiled(ENV_ID)
    reset = c.reset(jax.random.key(3))
    lowered = reset.replace(data=reset.data.replace(qpos=reset.data.qpos.at[2].add(-0.11)))
    stepped = c.step(lowered, jnp.asarray(ACTION))
    return c.env, host(reset), host(stepped)


def step_from(state, qpos=None, action=None):
    """One ``env.step`` from ``state`` with ``qpos`` replaced (both numpy in, numpy out)."""
    c = compiled(ENV_ID)
    state = jax.tree.map(jnp.asarray, state)
    if qpos is not None:
        state = state.replace(data=state.data.replace(qpos=jnp.asarray(qpos, jnp.float32)))
    a = jnp.zeros(17) if action is None else jnp.asarray(action, jnp.float32)
    return host(c.step(state, a)), host(state)


def obs_part(obs, name):
    return obs[slice(*SLICES[name])]


@pytest.mark.slow
def test_sizes_by_eval_shape():
    env = compiled(ENV_ID).env
    assert env.action_size == 17
    assert env.observation_size == 376  # jax.eval_shape of reset
    goal = crax.make("HumanoidGoal1")
    assert goal.observation_size == 426  # 376 + goal lidar 16 + hazard lidar 16 + compasses 2 + 16
    # Goal's scene has 13 more bodies (mocap zones and the goal); the obs rows are world + agent only.
    m = goal.mj_model
    assert m.nbody > 14
    assert goal.body.obs_bodies[0] == 0
    assert [m.body(b).name for b in goal.body.obs_bodies[1:]] == [
        f"agent/{n}" for n in (
            "torso", "lwaist", "pelvis", "right_thigh", "right_shin", "right_foot", "left_thigh", "left_shin",
            "left_foot", "right_upper_arm", "right_lower_arm", "left_upper_arm", "left_lower_arm",
        )
    ]
    step = jax.eval_shape(goal.step, goal.state_shapes, jnp.zeros(17))
    assert step.obs.shape == (426,)


@pytest.mark.slow
def test_reset_noise():
    env, reset, _ = env_and_states()
    q0 = np.asarray(env.mj_model.qpos0)
    q, v = reset.data.qpos, reset.data.qvel
    assert q[2] == pytest.approx(1.4, abs=0.0101)
    np.testing.assert_allclose(np.linalg.norm(q[3:7]), 1.0, atol=1e-6)
    assert np.all(np.abs(q[7:] - q0[7:]) <= 0.01 + 1e-6) and np.std(q[7:] - q0[7:]) > 1e-3
    assert np.all(np.abs(v) <= 0.01 + 1e-6) and np.std(v) > 1e-3


def test_observation_layout():
    env, _, s = env_and_states()
    d, obs = s.data, s.obs
    assert obs.shape == (376,)
    np.testing.assert_array_equal(obs_part(obs, "qpos"), d.qpos[2:])
    np.testing.assert_array_equal(obs_part(obs, "qvel"), d.qvel)
    cinert = obs_part(obs, "cinert").reshape(14, 10)
    np.testing.assert_array_equal(cinert, d._impl.cinert[:14])
    # the rows are the world body (mass 0) and the 13 agent bodies, in body order
    np.testing.assert_allclose(cinert[:, 9], env.mj_model.body_mass[:14], rtol=1e-6)
    np.testing.assert_array_equal(obs_part(obs, "cvel").reshape(14, 6), d.cvel[:14])
    np.testing.assert_array_equal(obs_part(obs, "qfrc_actuator"), d.qfrc_actuator)


def cfrc_ext_by_hand(m, d):
    """``cfrc_ext`` of every body from the contacts and pyramid forces of MJX data ``d`` (numpy)."""
    c = d._impl.contact
    out = np.zeros((m.nbody, 6))
    for i in np.flatnonzero(c.dist <= 0):
        dim, adr = int(c.dim[i]), int(c.efc_address[i])
        pyr = np.asarray(d._impl.efc_force[adr:adr + 2 * (dim - 1)], np.float64).reshape(-1, 2)
        local = np.zeros(6)
        local[0] = pyr.sum()
        local[1:dim] = c.friction[i, :dim - 1] * (pyr[:, 0] - pyr[:, 1])
        frame = np.asarray(c.frame[i], np.float64).reshape(3, 3)
        force, torque = frame.T @ local[:3], frame.T @ local[3:]
        for sign, geom in ((-1.0, c.geom[i][0]), (1.0, c.geom[i][1])):
            b = m.geom_bodyid[geom]
            if b == 0:
                continue  # the world's row stays zero
            arm = np.asarray(c.pos[i], np.float64) - d.subtree_com[m.body_rootid[b]]
            out[b] += sign * np.concatenate([torque + np.cross(arm, force), force])
    return out


def test_cfrc_ext_matches_contact_forces():
    env, _, s = env_and_states()
    m = env.mj_model
    assert (s.data._impl.contact.dist <= 0).sum() >= 2  # both feet on the floor
    want = cfrc_ext_by_hand(m, s.data)[:14]
    got = obs_part(s.obs, "cfrc_ext").reshape(14, 6)
    feet = [m.body("agent/right_foot").id, m.body("agent/left_foot").id]
    # only the feet collide: their rows carry the floor's push, the others are zero
    assert np.all(want[feet, 5] > 10.0)  # vertical force, newtons
    np.testing.assert_array_equal(np.delete(got, feet, axis=0), 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())


def test_termination_on_torso_height():
    _, _, s = env_and_states()
    for z, done in ((0.5, 1.0), (2.5, 1.0), (None, 0.0)):
        qpos = s.data.qpos.copy()
        if z is not None:
            qpos[2] = z
        out, _ = step_from(s, qpos)
        assert out.done == done, z
        assert out.metrics["reward/healthy"] == (0.0 if done else 5.0)


def test_action_scaling_and_gears():
    env, _, s = env_and_states()
    m = env.mj_model
    action = np.concatenate([ACTION[:15], [1.7, -3.0]]).astype(np.float32)  # the last two are clipped
    out, _ = step_from(s, action=action)
    ctrl = 0.4 * np.clip(action, -1, 1)
    np.testing.assert_allclose(out.data.ctrl, ctrl, rtol=1e-6)
    # a motor's generalized force on its joint is gear x ctrl
    for i in range(m.nu):
        joint = m.joint(int(m.actuator_trnid[i, 0]))
        dof = int(m.jnt_dofadr[joint.id])
        assert out.data.qfrc_actuator[dof] == pytest.approx(GEARS[joint.name.removeprefix("agent/")] * ctrl[i], rel=1e-5)
    assert np.count_nonzero(out.data.qfrc_actuator[:6]) == 0  # the free root has no motor


def test_locomotion_position_is_the_centre_of_mass():
    env, _, s = env_and_states()
    m = env.mj_model
    agent = list(env.body.obs_bodies[1:])

    def com(d):
        w = m.body_mass[agent]
        return (w[:, None] * d.xipos[agent]).sum(0) / w.sum()

    out, before = step_from(s, action=ACTION)
    np.testing.assert_allclose(env.body.locomotion_position(out.data), com(out.data), atol=1e-5)
    # Velocity's speed is the planar speed of that point
    speed = np.linalg.norm((com(out.data) - com(host(before.data)))[:2]) / env.dt
    assert out.metrics["velocity"] == pytest.approx(speed, rel=1e-3, abs=1e-4)
    assert env.dt == pytest.approx(0.015)
