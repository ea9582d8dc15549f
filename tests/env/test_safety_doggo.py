"""Safety-Gymnasium's Doggo (SafetyGymDoggo) on its navigation ids, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_doggo_reference.json) was recorded by tools/safety_gymnasium/sg_reference_doggo.py
in Safety-Gymnasium itself; docs/safety_gymnasium.md (The Doggo) lists the tolerances below and the
measured errors. The default tier checks the spaces of every Doggo id on the suites (nothing built),
SafetyDoggoGoal1's model, the readings against MuJoCo's sensor stage, the self-contacts and the reset
(nothing compiled); the slow tier the recorded states of Goal1 and Goal2 (through MuJoCo's forward pass
in C: small observation programs) and the recorded rollout, through the one compiled step of the file.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.base import SAFETY_GYM_SOLVER
from crax.bodies.safety_doggo import HINGES, PROXIES, TORSO, SafetyGymDoggo
from crax.core.scene import Category
from tests.env.body_checks import agent_geoms, observed, sensing, unrelated_pairs
from tests.env.safety_gym_agents import DOGGO
from tests.env.safety_gym_fidelity import Pressed, assert_rollout, assert_states
from tests.env.safety_gym_reference import Replica, assert_spaces, case, load
from tests.env.safety_gym_tracks import Track

REFERENCE = "safety_gym_doggo_reference.json"
IMU, TOUCH = slice(0, 12), DOGGO.parts["touch"]
"""The accelerometer, velocimeter, gyro and magnetometer; the 8 touch sensors (the Doggo's 56 readings:
:data:`~tests.env.safety_gym_agents.DOGGO`)."""
NOSE = Pressed("^vase_at_nose$", {"accelerometer": 5e-3, "sensors": 5e-3, "touch": 5e-4})
"""The state whose vase presses into the torso's nose: crax's torso meets it through a capsule, not the
cylinder, so the contact's point and normal differ (measured: accelerometer 2.1e-3, touch 7.7e-5)."""
FIRST_STEP = {"qpos": 1e-6, "imu": 1e-4, "touch": 1e-5, "reward": 1e-6}
"""The rollout's first step (0.1 s of random actions from standing): joint state, readings and reward
(measured 8.2e-8, 1.0e-5, 3.5e-7, 3.1e-9)."""
DYNAMICS = Track({"xy": {10: 2e-2, None: 0.15}, "reward": {None: 5e-2}}, horizon=40)
"""Bounds over the 40-step rollout of random actions from standing: the torso's planar position (m)
over 10 steps and over all 40, the reward over all 40; the cost equal at every step. Measured: 9.2e-3 m
over 10 steps, 6.0e-2 m over 40, reward 2.5e-2. The light Doggo's feet bounce on and off the floor
between substeps and its hinges hit their limits; from the second step MJX parts from MuJoCo where a
leg's capsule touches the floor steeper than 60°: MJX's plane-capsule contact frame turns the friction
pyramid there (docs/safety_gymnasium.md, The Doggo)."""


def record(env_id: str) -> dict:
    return load(REFERENCE)["tasks"][env_id]


DOGGO_IDS = sorted(load(REFERENCE)["tasks"])


@pytest.fixture(scope="module")
def goal1() -> Replica:
    return Replica("SafetyDoggoGoal1-v0", record("SafetyDoggoGoal1-v0"))


@pytest.fixture(scope="module")
def goal2() -> Replica:
    return Replica("SafetyDoggoGoal2-v0", record("SafetyDoggoGoal2-v0"))


def test_every_doggo_id_is_served_with_safety_gymnasiums_spaces():
    """The 19 ids (records rounded to 9 digits): the suite's declared spaces, keys, control step, episode length, placement square
    and object counts, read from the suites (nothing built)."""
    served = set(crax.env_ids())
    assert len(DOGGO_IDS) == 19
    spec = SafetyGymDoggo().mjcf()
    assert len(spec.actuators) == 12 and all(list(a.ctrlrange) == [-1.0, 1.0] for a in spec.actuators)
    for env_id in DOGGO_IDS:
        rec = record(env_id)
        body_cls, suite_cls, level = crax.parse_id(env_id)
        assert env_id in served and body_cls is SafetyGymDoggo, env_id
        body = body_cls()
        body.ctrl_range = tuple(tuple(a.ctrlrange) for a in spec.actuators)  # what bind reads from the model
        suite = suite_cls(body, level)
        spaces = suite.gymnasium_spaces()
        np.testing.assert_array_equal(spaces["obs_low"], rec["observation_space"]["low"], err_msg=env_id)
        np.testing.assert_array_equal(spaces["obs_high"], rec["observation_space"]["high"], err_msg=env_id)
        assert spaces["dtype"] == np.float64 and rec["observation_space"]["dtype"] == "float64"
        assert rec["action_space"] == {"shape": [12], "dtype": "float64", "low": [-1.0] * 12, "high": [1.0] * 12}
        assert list(spaces["action_low"]) == [-1.0] * 12 and list(spaces["action_high"]) == [1.0] * 12
        keys = [list(k) for k in SafetyGymDoggo.obs_keys] + [[f"{s.target}_lidar", s.size] for s in suite.sensors]
        assert keys == rec["obs_keys"], env_id  # every key, its size, Safety-Gymnasium's flattened order
        assert suite.body.dt == pytest.approx(rec["dt"]) == 0.1 and suite.episode_length == rec["num_steps"], env_id
        counts = {label: p.count for label, p in suite.objects.items()}
        assert {k: counts.get(k, 0) for k in rec["counts"]} == rec["counts"], env_id  # hazards and vases
        if "Circle" not in env_id and "Run" not in env_id:
            assert suite.extent == rec["extents"][2], env_id


def test_the_env_and_its_model_are_safety_gymnasiums(goal1):
    rec, env = goal1.record, goal1.env
    assert_spaces(env, rec)
    assert env.suite.body_obs_size == DOGGO.body and env.action_size == 12  # the observation's size: the recorded states
    m, sg = env.mj_model, rec["model"]
    assert (m.opt.timestep, env.body.frame_skip, m.opt.integrator) == (sg["timestep"], sg["frame_skip"], sg["integrator"])
    assert sg["iterations"] == 100 and m.opt.iterations == SAFETY_GYM_SOLVER[0]  # docs/safety_gymnasium.md, "The solver budget"
    bodies = [b for b in range(m.nbody) if m.body(b).name.startswith("agent/")]
    np.testing.assert_allclose(m.body_mass[bodies], sg["body_mass"], rtol=1e-8)  # the proxies are massless
    np.testing.assert_allclose(m.body_inertia[bodies], sg["body_inertia"], rtol=1e-8)
    np.testing.assert_allclose(m.body_ipos[bodies], sg["body_ipos"], atol=1e-12)
    np.testing.assert_allclose(m.body_pos[bodies[1:]], sg["body_pos"], atol=1e-12)
    joints = [m.joint(env.body.prefix + ("root" if n == "agent" else n)).id for n in sg["joint_names"]]
    np.testing.assert_allclose(m.jnt_range[joints], sg["jnt_range"])
    np.testing.assert_allclose(m.jnt_stiffness[joints], sg["jnt_stiffness"])
    np.testing.assert_allclose([m.qpos_spring[m.jnt_qposadr[j]] for j in joints[1:]], sg["qpos_spring"][1:])
    np.testing.assert_allclose(m.dof_armature[slice(*env.body.qvel_adr)], sg["dof_armature"])
    assert not m.dof_damping[slice(*env.body.qvel_adr)].any() and not any(sg["dof_damping"])
    assert [m.joint(int(j)).name.removeprefix("agent/") for j in m.actuator_trnid[:, 0]] == list(HINGES) == [
        n for n in sg["actuator_joint"]]
    np.testing.assert_allclose(m.actuator_gear[:, 0], sg["actuator_gear"])
    for name, size, kind, condim in zip(sg["geom_names"], sg["geom_size"], sg["geom_type"], sg["geom_condim"], strict=True):
        g = m.geom(env.body.prefix + name)
        assert (int(g.type[0]), int(g.condim[0])) == (kind, condim) and g.size.tolist() == pytest.approx(size), name
    assert env.body.qpos0[2] == sg["z_height"] == 0.22
    # the torso's cylinders touch the floor only; a capsule along each takes its contacts with objects
    for name in TORSO:
        g = m.geom(env.body.prefix + name)
        assert (int(g.contype[0]), int(g.conaffinity[0])) == (int(Category.AGENT_WHEEL), int(Category.FLOOR))
    for name in PROXIES:
        g = m.geom(env.body.prefix + name)
        assert g.type[0] == mujoco.mjtGeom.mjGEOM_CAPSULE and g.size[:2].tolist() == pytest.approx([0.0375, 0.03125])
        assert int(g.contype[0]) == int(Category.AGENT_FLOATING)


@pytest.mark.slow  # Safety-Gymnasium's observations on recorded states stay in the fast tier on the Point
def test_observations_and_costs_on_recorded_states(goal1, goal2):
    for replica in (goal1, goal2):
        assert_states(replica, NOSE, counted=("vases_contact",))
    touching = {c["name"]: np.asarray(c["obs"])[TOUCH] for c in goal1.record["states"]}
    assert np.count_nonzero(touching["standing"]) == 6 and not touching["reset_pose_falling"].any()


def test_the_observation_is_what_mujocos_sensors_read(goal1):
    """The 56 readings computed from the state equal MuJoCo's own sensor stage (the body's MJCF carries
    Safety-Gymnasium's sensors) along 300 control steps of random actions in MuJoCo, every 20th
    compared: the Doggo standing, walking, falling over; its feet and knees on and off the floor.
    Nothing is compiled (the observation runs op by op)."""
    body = goal1.env.body
    m, d = sensing(goal1.env)
    d.qpos[slice(*body.qpos_adr)] = body.qpos0
    d.qpos[m.jnt_qposadr[m.joint("vases/0").id]:][:3] = [5.0, 5.0, 0.1]
    rng = np.random.default_rng(0)
    touched = np.zeros(8, bool)
    for k in range(300):
        d.ctrl[:] = rng.uniform(-1, 1, 12)
        for _ in range(body.frame_skip):
            mujoco.mj_step(m, d)
        if k % 20:
            continue
        mujoco.mj_forward(m, d)
        touch = [d.sensor(body.prefix + key).data for key, _ in body.obs_keys[4:12]]
        imu = [d.sensor(body.prefix + key).data for key, _ in body.obs_keys[:4]]
        angles = np.array([d.joint(body.prefix + h).qpos[0] for h in HINGES])
        speeds = [d.joint(body.prefix + h).qvel[0] for h in HINGES]
        expect = np.concatenate([*imu, *touch, speeds, np.stack([np.sin(angles), np.cos(angles)], -1).ravel()])
        got = observed(body, m, d)
        np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5, err_msg=f"step {k}")
        touched |= got[TOUCH] > 0
    assert touched.sum() >= 6  # the knees' and the feet's sensors read contacts along the way


def test_only_the_rear_shins_can_meet(goal1):
    """crax's Doggo geoms do not collide with each other; Safety-Gymnasium's could, between geoms of
    bodies that are not parent and child. Over the joints' ranges (their ends and between) the rear
    shins come within reach of each other and are an explicit pair of the asset; every other such pair
    stays more than 1.5 cm apart. Plain MuJoCo, nothing compiled."""
    m = goal1.env.mj_model
    d = mujoco.MjData(m)
    pairs = unrelated_pairs(m, agent_geoms(m, leave_out=PROXIES))
    assert len(pairs) == 60
    shins = (m.geom("agent/ankle_2").id, m.geom("agent/ankle_3").id)
    assert m.npair == 1 and (int(m.pair_geom1[0]), int(m.pair_geom2[0])) == shins and m.pair_dim[0] == 6
    lo, hi = m.jnt_range[1:14].T
    rng = np.random.default_rng(1)
    poses = np.concatenate([np.where(rng.integers(0, 2, (500, 13)) == 1, hi, lo), rng.uniform(lo, hi, (500, 13))])
    nearest = {}
    for hinges in poses:
        d.qpos[slice(*goal1.env.body.qpos_adr)] = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, *hinges]
        mujoco.mj_kinematics(m, d)
        for a, b in pairs:
            nearest[a, b] = min(nearest.get((a, b), np.inf), mujoco.mj_geomDistance(m, d, a, b, 0.1, None))
    assert nearest[shins] < 0 and min(v for k, v in nearest.items() if k != shins) > 0.015


def test_resets_place_the_doggo_as_safety_gymnasium_does(goal1):
    """``Doggo.reset`` does nothing: at rest, level, 0.22 m up, every hinge at 0, moved to the layout's
    point and turned by its yaw; drawn op by op (nothing compiled)."""
    body = goal1.env.body
    qpos, qvel = body.initial_state(jax.random.key(0))
    np.testing.assert_allclose(np.asarray(qpos), [0.0, 0.0, 0.22, 1.0, 0.0, 0.0, 0.0] + [0.0] * 13, atol=1e-7)
    assert not np.asarray(qvel).any()
    placed = np.asarray(body.place(qpos, jnp.asarray([0.3, -0.4]), jnp.asarray(1.2)))
    np.testing.assert_allclose(placed[:7], [0.3, -0.4, 0.22, np.cos(0.6), 0.0, 0.0, np.sin(0.6)], atol=1e-7)
    assert body.healthy(goal1.env._data0)  # never dies


@pytest.mark.slow
def test_the_rollout_stays_close(goal1):
    out = assert_rollout(goal1, "random_actions", DYNAMICS)
    (step, *_), first = case(goal1.record, "rollouts", "random_actions")["steps"], out["obs"][0]
    np.testing.assert_allclose(out["qpos"][0], step["qpos"], atol=FIRST_STEP["qpos"])
    np.testing.assert_allclose(first[IMU], np.asarray(step["obs"])[IMU], atol=FIRST_STEP["imu"])
    np.testing.assert_allclose(first[TOUCH], np.asarray(step["obs"])[TOUCH], atol=FIRST_STEP["touch"])
    assert abs(out["reward"][0] - step["reward"]) < FIRST_STEP["reward"]
