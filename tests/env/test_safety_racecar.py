"""Safety-Gymnasium's Racecar served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_racecar_reference.json) was recorded by
tools/safety_gymnasium/sg_reference_racecar.py in Safety-Gymnasium itself; docs/safety_gymnasium.md (The Racecar)
lists the tolerances below and the measured errors. One env, SafetyRacecarGoal1-v0 (module-scoped);
the default tier checks its spaces, timing and compiled model (nothing compiled); every other id's
spaces, the recorded states and the drive are in the slow tier. The file compiles one step.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.safety_racecar import PROXIES, WHEELS, SafetyGymRacecar
from crax.core.scene import Category
from tests.env.safety_gym_fidelity import assert_rollout, assert_states
from tests.env.safety_gym_reference import Replica, assert_spaces_and_keys, case, load
from tests.env.safety_gym_tracks import Track

REF = load("safety_gym_racecar_reference.json")
ID = "SafetyRacecarGoal1-v0"
MODEL_RTOL = 1e-6
"""The compiled agent's masses, inertias, poses, joints and actuators against Safety-Gymnasium's."""
DRIVE = Track({"xy": {15: 1e-5, None: 0.1}, "heading": {15: 1e-4, None: 0.15}, "reward": {15: 1e-5, None: 1e-2},
               "lidar": {15: 1e-4}}, horizon=40)
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
    assert_states(replica)


@pytest.mark.slow
def test_drive_stays_close(replica):
    assert_rollout(replica, "drive", DRIVE)


@pytest.mark.slow
def test_wheel_strikes_the_vase_through_its_proxy(replica):
    """The left front wheel drives into the vase (from step 11): Safety-Gymnasium's cylinder, crax's
    box around it. The vase (8 mg) is knocked aside; its path is what the substitution changes."""
    out = assert_rollout(replica, "wheel_strikes_vase", Track({"xy": {None: STRIKE["xy"]}}))
    steps = case(replica.record, "rollouts", "wheel_strikes_vase")["steps"]
    got, ref = out["xpos"][:, replica.env.mj_model.body("vases/0").id, :2], np.asarray([s["vase"] for s in steps])
    first = next(i for i, s in enumerate(steps) if s["wheel_vase"])
    moved = np.linalg.norm(got - got[0], axis=-1)
    assert moved[first - 1] < 1e-4 < moved[first]  # struck on Safety-Gymnasium's step
    assert np.linalg.norm(got - ref, axis=-1).max() < STRIKE["vase"]
