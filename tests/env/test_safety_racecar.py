"""Safety-Gymnasium's Racecar served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_racecar_reference.json) was recorded by
tools/safety_gymnasium/sg_reference_racecar.py in Safety-Gymnasium itself; docs/safety_gymnasium.md (The Racecar)
lists the tolerances below and the measured errors. One env, SafetyRacecarGoal1-v0 (module-scoped);
the default tier checks its spaces, timing and compiled model (nothing compiled); every other id's
spaces, the recorded states and the drive are in the slow tier. The file compiles one step.
"""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.safety_racecar import PROXIES, WHEELS, SafetyGymRacecar
from crax.core.mjx import mjx
from crax.core.scene import Category
from tests.env.safety_gym_reference import Replica, assert_recorded_costs, assert_spaces_and_keys, case, load

REF = load("safety_gym_racecar_reference.json")
ID = "SafetyRacecarGoal1-v0"
BODY = 12
"""The Racecar's own readings: the first 12 entries of the observation (``SafetyGymRacecar.obs_keys``)."""
SENSOR_ATOL = 1e-4
"""Accelerometer, velocimeter, gyro, magnetometer on a set state (MuJoCo 2.3.3 in float64 against
MuJoCo 4.0's forward pass and crax's float32 readings): measured ≤ 3.7e-6 (resting, rolling, at
full lock, in the air), 1.6e-5 where a vase presses 3 mm into the bumper."""
LIDAR_ATOL = 1e-5
"""Pseudo-lidar bins on a set state, the tilted Racecar's included (measured ≤ 6.9e-7)."""
MODEL_RTOL = 1e-6
"""The compiled agent's masses, inertias, poses, joints and actuators against Safety-Gymnasium's."""
DRIVE = {"short": 15, "xy": 1e-5, "heading": 1e-4, "reward": 1e-5, "lidar": 1e-4,
         "xy_all": 0.1, "heading_all": 0.15, "reward_all": 1e-2}
"""The 40-step drive (full throttle steering half left, full right lock from step 16, then braking
backwards): bounds on the root's position (m), heading (rad), reward and lidar bins over the 15 steps
before full lock, and on position, heading and reward over all 40; the costs compare exactly.
Measured: 1.1e-7 m, 3.3e-7 rad, 1.5e-7, 6.7e-7 over 15 steps; 3.8e-2 m, 6.5e-2 rad, 2.2e-3 over 40
(at full lock Safety-Gymnasium's front wheel touches its bumper, which crax's does not, and MJX
parts from MuJoCo: docs/safety_gymnasium.md, The Racecar)."""
STRIKE = {"vase": 5e-2, "xy": 1e-3}
"""The wheel striking the vase: bounds on the vase's position (m; measured 1.9e-2 at most, 1.8e-2 at
the end, of 0.16 m it is knocked: the wheel's proxy box) and on the Racecar's (measured 2.7e-5)."""


@pytest.fixture(scope="module")
def replica() -> Replica:
    return Replica(ID, REF["tasks"][ID])


def assert_spaces(env, ref: dict) -> None:
    assert_spaces_and_keys(env, ref)
    assert env.dt == pytest.approx(ref["dt"]) == 0.04 and env.episode_length == ref["num_steps"], env.id


def test_spaces_timing_and_compiled_model_are_safety_gymnasiums(replica):
    env, model = replica.env, REF["model"]
    assert_spaces(env, REF["spaces"][ID])
    m, body = env.mj_model, env.body
    assert (m.opt.timestep, body.frame_skip, m.opt.integrator) == (model["timestep"], model["frame_skip"],
                                                                  mujoco.mjtIntegrator.mjINT_RK4)
    assert model["integrator"] == int(mujoco.mjtIntegrator.mjINT_RK4)
    bodies = [b for b in range(m.nbody) if m.body(b).name.startswith(body.prefix)]
    rot = np.zeros((len(bodies), 9))
    for i, b in enumerate(bodies):
        mujoco.mju_quat2Mat(rot[i], m.body_iquat[b])
    rot = rot.reshape(-1, 3, 3)
    inertia = rot @ (m.body_inertia[bodies][:, :, None] * rot.transpose(0, 2, 1))
    joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] in bodies]
    got = {"body_mass": m.body_mass[bodies], "body_com": m.body_ipos[bodies], "body_inertia": inertia,
           "body_pos": m.body_pos[bodies], "body_quat": m.body_quat[bodies], "jnt_type": m.jnt_type[joints],
           "jnt_axis": m.jnt_axis[joints], "jnt_range": m.jnt_range[joints], "jnt_limited": m.jnt_limited[joints],
           "dof_damping": m.dof_damping[slice(*body.qvel_adr)], "dof_armature": m.dof_armature[slice(*body.qvel_adr)],
           "actuator_gainprm": m.actuator_gainprm[:, :3], "actuator_biasprm": m.actuator_biasprm[:, :3],
           "actuator_ctrlrange": m.actuator_ctrlrange, "actuator_forcerange": m.actuator_forcerange,
           "actuator_trnid": m.jnt_qposadr[m.actuator_trnid[:, 0]] - body.qpos_adr[0],
           "eq_type": m.eq_type, "eq_data": m.eq_data[:, :5], "eq_solref": m.eq_solref}
    assert m.body_mass[bodies[0]] == model["body_mass"][0] == 0.0
    for key, value in got.items():
        ref = np.asarray(model[key])
        if key.startswith("body_"):  # the root: massless, its pose the layout's
            value, ref = value[1:], ref[1:]
        np.testing.assert_allclose(value, ref, rtol=MODEL_RTOL, atol=1e-12, err_msg=key)
    # the cylinders touch the floor only; massless boxes around the wheels take their object contacts
    for name in WHEELS:
        g = m.geom(body.prefix + name).id
        assert (m.geom_contype[g], m.geom_conaffinity[g]) == (int(Category.AGENT_WHEEL), int(Category.FLOOR))
    for name in PROXIES:
        assert m.geom(body.prefix + name).size.tolist() == pytest.approx([0.05, 0.0225, 0.05])


@pytest.mark.slow
def test_every_racecar_id_is_served_with_safety_gymnasiums_spaces():
    served = list(REF["spaces"])
    assert len(served) == 19 and set(served) <= set(crax.env_ids())
    for env_id in served:
        assert crax.parse_id(env_id)[0] is SafetyGymRacecar
        assert_spaces(crax.make(env_id), REF["spaces"][env_id])


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        np.testing.assert_allclose(got[:BODY], ref[:BODY], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c)


@pytest.mark.slow
def test_the_observation_is_what_mujocos_sensors_read(replica):
    """The 12 readings computed from the state equal MuJoCo's own sensor stage (the body's MJCF
    carries Safety-Gymnasium's sensors) on random states. Nothing is compiled."""
    body = replica.env.body
    m = copy.deepcopy(replica.env.mj_model)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    d = mujoco.MjData(m)
    q, v = slice(*body.qpos_adr), slice(*body.qvel_adr)
    rng = np.random.default_rng(0)
    for k in range(6):
        quat, steer = rng.normal(size=4), rng.uniform(-0.7, 0.7)
        d.qpos[q] = [*rng.uniform(-1, 1, 2), rng.uniform(0.05, 0.3), *(quat / np.linalg.norm(quat)),
                     steer, rng.uniform(-3, 3), steer, *rng.uniform(-3, 3, 2)]
        d.qvel[v] = rng.normal(size=11)
        d.ctrl[:2] = rng.uniform(-1, 1, 2) * [20.0, 0.785]
        mujoco.mj_forward(m, d)
        expect = np.concatenate([d.sensor(body.prefix + key).data for key, _ in body.obs_keys])
        got = np.asarray(body.observe(mjx.put_data(m, d, impl="jax")))
        np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-4, err_msg=f"state {k}")


@pytest.mark.slow
def test_drive_stays_close(replica):
    c = case(replica.record, "rollouts", "drive")
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) and not out["done"].any()
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    heading = np.abs(np.angle(np.exp(1j * (out["heading"] - np.asarray([s["yaw"] for s in steps])))))
    reward = np.abs(out["reward"] - np.asarray([s["reward"] for s in steps]))
    lidar = np.abs(out["obs"][:, BODY:] - np.asarray([s["obs"] for s in steps])[:, BODY:])
    h = DRIVE["short"]
    assert xy[:h].max() < DRIVE["xy"] and heading[:h].max() < DRIVE["heading"]
    assert reward[:h].max() < DRIVE["reward"] and lidar[:h].max() < DRIVE["lidar"]
    assert xy.max() < DRIVE["xy_all"] and heading.max() < DRIVE["heading_all"] and reward.max() < DRIVE["reward_all"]
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])


@pytest.mark.slow
def test_wheel_strikes_the_vase_through_its_proxy(replica):
    """The left front wheel drives into the vase (from step 11): Safety-Gymnasium's cylinder, crax's
    box around it. The vase (8 mg) is knocked aside; its path is what the substitution changes."""
    c = case(replica.record, "rollouts", "wheel_strikes_vase")
    out, steps = replica.rollout(c), c["steps"]
    vase = replica.env.mj_model.body("vases/0").id
    got, ref = out["xpos"][:, vase, :2], np.asarray([s["vase"] for s in steps])
    first = next(i for i, s in enumerate(steps) if s["wheel_vase"])
    moved = np.linalg.norm(got - got[0], axis=-1)
    assert moved[first - 1] < 1e-4 < moved[first]  # struck on Safety-Gymnasium's step
    error = np.linalg.norm(got - ref, axis=-1)
    agent = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    assert error.max() < STRIKE["vase"] and agent.max() < STRIKE["xy"]
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])
