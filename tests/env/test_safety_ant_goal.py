"""Safety-Gymnasium's Ant Goal 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``ant_goal_records``); docs/safety_gymnasium.md lists the tolerances below
and the measured errors. One env per level (module-scoped): the hand-placement program at levels
0 and 1, the step at level 0; level 2 (10 free vases against the Ant's 13 geoms) is in the slow
tier. The Ant's own model is also checked without compiling anything: its observation against
MuJoCo's sensor stage, its geoms' clearances, its reset draw.
"""

from __future__ import annotations

import copy

import jax
import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.safety_navigation_ant import SafetyGymNavigationAnt
from crax.core.mjx import mjx
from crax.gymnasium import safety as safety_gymnasium
from crax.gymnasium.safety.make_args import resolve_id
from crax.suites.safety_gym import SafetyGoal
from crax.suites.task_env import TaskEnv
from tests.env.safety_gym_reference import Replica, assert_arena, assert_recorded_costs, case

BODY = 40
"""The Ant's own readings: the first 40 entries of the observation (``SafetyGymNavigationAnt.obs_keys``)."""
SENSOR_ATOL = 1e-4
"""Accelerometer, velocimeter, gyro, magnetometer on a set state (MuJoCo 2.3.3 in float64 vs MJX in
float32; measured ≤ 2.3e-6, the accelerometer of a standing Ant, its feet in contact, ≤ 4.2e-7)."""
JOINT_ATOL = 1e-5
"""Hinge velocities, height, angular velocity, hinge sin/cos on a set state (measured ≤ 6.5e-8)."""
LIDAR_ATOL = 1e-5
"""Pseudo-lidar bins on a set state, the tilted Ant's included (measured ≤ 5.4e-7)."""
REWARD_ATOL = 1e-4
"""Reward of a step from a set state standing still (the goal reached: measured 0)."""
DYNAMICS = {"short": 20, "xy": 0.03, "heading": 0.1, "reward": 0.01, "lidar": 0.1,
            "mid": 50, "xy_mid": 0.2, "horizon": 100, "xy_all": 0.5}
"""The long rollout (a walking gait for 100 steps, 10 s, from standing; it walks 0.9 m): bounds on
the torso's position (m), heading (rad), reward and lidar bins over the first 20 steps, on its
position over 50 and over all 100. Measured (levels 0-2, in two builds of the same programs: XLA's
default code generation and the tests' cheaper one, which sums in another order): ≤ 1.1e-2 m,
3.5e-2 rad, 7.3e-3, 4.5e-2 over 20 steps; ≤ 9.0e-2 m over 50; 8.8e-2 to 0.31 m over 100 (the
heading then 0.21 to 0.95 rad apart, which is not bounded). The walking Ant is chaotic: MuJoCo 4.0
in C, float64, from the recorded state departs from Safety-Gymnasium's MuJoCo 2.3.3 by 3.3e-3 m in
20 steps and 0.12 m, 0.34 rad in 100, and from that state moved by 1e-7 by up to 1.1e-2 m and
4.6e-2 rad in 20 steps, 5.6e-2 m in 50, 0.16 m and 0.56 rad in 100 (docs/safety_gymnasium.md);
crax's float32 rounds every operation."""

LEVELS = [0, 1, pytest.param(2, marks=pytest.mark.slow)]  # level 2: 10 free vases


@pytest.fixture(scope="module", params=LEVELS)
def replica(request) -> Replica:
    return Replica(f"SafetyAntGoal{request.param}-v0")


@pytest.mark.slow
def test_spaces_timing_keys_and_physics_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_arena(env, rec)  # every key, its size, Safety-Gymnasium's flattened order
    assert env.observation_size == sum(n for _, n in rec["obs_keys"]) and BODY == env.suite.body_obs_size
    assert env.dt == pytest.approx(rec["dt"]) == 0.1 and env.episode_length == rec["num_steps"] == 1000
    m = env.mj_model
    assert (m.opt.timestep, env.body.frame_skip, m.opt.integrator) == (0.01, 10, mujoco.mjtIntegrator.mjINT_RK4)


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        np.testing.assert_allclose(got[:12], ref[:12], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=JOINT_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c)


ROLLOUT_LEVELS = [0]
"""Levels whose goal, death and 100-step walk are run (the step compiles for about 100 s at level 0
on two busy cores; RK4 runs the physics four times a substep, and a step of level 2's scene takes
0.4 s on one core): the Ant's dynamics, its goal and its death do not depend on the level. Levels 1 and 2 are
checked on their recorded states above; a kicked vase's cost is stepped at level 2 by the Point and
the Car (docs/safety_gymnasium.md, "Which levels the tests step")."""


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.slow
def test_goal_reached_and_death_on_recorded_rollouts(replica):
    c = case(replica.record, "rollouts", "reach_goal")
    out = replica.rollout(c)
    np.testing.assert_allclose(out["reward"][:1], [c["steps"][0]["reward"]], atol=REWARD_ATOL)
    assert out["metrics"]["goals_reached"][0] == 1.0 == float(c["steps"][0]["goal_met"])
    assert not out["done"].any() and all(s["alive"] for s in c["steps"])
    c = case(replica.record, "rollouts", "dies_on_its_back")  # torso on the floor: 0.0625 m < 0.08 m
    out = replica.rollout(c)
    (step,) = c["steps"]
    assert not step["alive"] and len(out["done"]) == 1 and out["done"][0] == 1.0 and out["metrics"]["env/nonfinite_state"][0] == 0
    assert out["reward"][0] == pytest.approx(step["reward"], abs=REWARD_ATOL) and out["cost"][0] == step["cost"]


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.slow
def test_dynamics_stay_as_close_as_the_ants_sensitivity_allows(replica):
    c = case(replica.record, "rollouts", "dynamics")
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) == DYNAMICS["horizon"] and not out["done"].any()
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    heading = np.abs(np.angle(np.exp(1j * (out["heading"] - np.asarray([s["yaw"] for s in steps])))))
    h = DYNAMICS["short"]
    assert xy[:h].max() < DYNAMICS["xy"] and heading[:h].max() < DYNAMICS["heading"]
    assert np.abs(out["reward"][:h] - np.asarray([s["reward"] for s in steps[:h]])).max() < DYNAMICS["reward"]
    lidar = np.asarray([s["obs"] for s in steps[:h]])[:, BODY:]
    assert np.abs(out["obs"][:h, BODY:] - lidar).max() < DYNAMICS["lidar"]
    assert xy[:DYNAMICS["mid"]].max() < DYNAMICS["xy_mid"] and xy.max() < DYNAMICS["xy_all"]
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])


@pytest.mark.parametrize("replica", [0], indirect=True)
def test_the_observation_is_what_mujocos_sensors_read(replica):
    """The 40 readings computed from the state equal MuJoCo's own sensor stage (the body's MJCF
    carries Safety-Gymnasium's sensors) on random states: in the air, tilted, on the floor, pressed
    into it, spinning, with controls. Nothing is compiled (the observation runs op by op)."""
    body = replica.env.body
    m = copy.deepcopy(replica.env.mj_model)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    d = mujoco.MjData(m)
    q, v = slice(*body.qpos_adr), slice(*body.qvel_adr)
    rng = np.random.default_rng(0)
    lo, hi = m.jnt_range[1:9].T
    for k in range(6):
        quat = rng.normal(size=4) if k % 2 else np.array([1.0, 0.0, 0.0, rng.normal()])
        d.qpos[q] = [*rng.uniform(-1, 1, 2), rng.uniform(0.05, 0.3), *(quat / np.linalg.norm(quat)), *rng.uniform(lo, hi)]
        d.qvel[v] = rng.normal(size=14)
        d.ctrl[:8] = rng.uniform(-1, 1, 8)
        mujoco.mj_forward(m, d)
        expect = []
        for key, size in body.obs_keys:
            reading = d.sensor(body.prefix + key).data
            expect.append(reading[2:] if key == "agent_pos" else
                          [np.sin(reading[0]), np.cos(reading[0])] if size == 2 else reading)
        got = np.asarray(body.observe(mjx.put_data(m, d, impl="jax")))
        np.testing.assert_allclose(got, np.concatenate(expect), rtol=1e-5, atol=1e-4, err_msg=f"state {k}")


@pytest.mark.parametrize("replica", [0], indirect=True)
def test_the_ants_own_geoms_never_meet(replica):
    """crax's Ant does not collide with itself; Safety-Gymnasium's could, between geoms of bodies
    that are not parent and child. Over its joint ranges (and their ends) those pairs stay more than
    2 cm apart, so no such contact ever arises there either. Plain MuJoCo, nothing compiled."""
    m = replica.env.mj_model
    d = mujoco.MjData(m)
    agent = [g for g in range(m.ngeom) if m.body(int(m.geom_bodyid[g])).name.startswith("agent/")]
    weld, parent = m.body_weldid, m.body_parentid

    def adjacent(a: int, b: int) -> bool:
        wa, wb = weld[m.geom_bodyid[a]], weld[m.geom_bodyid[b]]
        return wa == wb or wa == weld[parent[wb]] or wb == weld[parent[wa]]

    pairs = [(a, b) for i, a in enumerate(agent) for b in agent[i + 1:] if not adjacent(a, b)]
    assert len(pairs) == 44
    lo, hi = m.jnt_range[1:9].T
    rng = np.random.default_rng(1)
    corners = np.where((np.arange(256)[:, None] >> np.arange(8)) & 1, hi, lo)
    nearest = np.inf
    for hinges in np.concatenate([corners, rng.uniform(lo, hi, (744, 8))]):
        d.qpos[slice(*replica.env.body.qpos_adr)] = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, *hinges]
        mujoco.mj_kinematics(m, d)
        nearest = min(nearest, min(mujoco.mj_geomDistance(m, d, a, b, 0.1, None) for a, b in pairs))
    assert nearest > 0.02


@pytest.mark.parametrize("replica", [0], indirect=True)
def test_resets_draw_the_ants_pose(replica):
    """The reset's joint state (``Ant.reset``): root 0.18 m up and level, hips U(±0.1), ankles
    ±(π/2 + U(±0.1)), at rest; drawn op by op (nothing compiled)."""
    body = replica.env.body
    draws = [body.initial_state(k) for k in jax.random.split(jax.random.key(0), 64)]
    qpos, qvel = np.stack([np.asarray(q) for q, _ in draws]), np.stack([np.asarray(v) for _, v in draws])
    np.testing.assert_allclose(qpos[:, :7], np.tile([0.0, 0.0, 0.18, 1.0, 0.0, 0.0, 0.0], (64, 1)), atol=1e-7)
    offset = qpos[:, 7:] - np.asarray(body.reset_pose)
    assert np.all(np.abs(offset) <= 0.1) and np.all(np.ptp(offset, axis=0) > 0.15)  # uniform in ±0.1, each drawn
    assert np.all(np.sign(qpos[:, 8::2]) == [1, -1, -1, 1])  # ankles 1 and 4 positive, 2 and 3 negative
    assert not np.any(qvel)


@pytest.mark.slow
@pytest.mark.parametrize("replica", [1], indirect=True)
def test_resets_place_and_drop_the_ant_within_safety_gymnasiums_layout(replica):
    """Level 1's draw (``Replica.resets``: reset's own, forwarded in C): layouts as Goal's, the Ant in
    its reset pose turned by a uniform yaw, falling (its accelerometer reads about 0, as
    Safety-Gymnasium's first observation does), no cost."""
    env = replica.env
    states = replica.resets(jax.random.split(jax.random.key(3), 16))
    suite, body = env.suite, env.body
    root = np.asarray(jax.vmap(body.qpos)(states.data))
    agent = root[:, :2]
    points = np.concatenate([agent[:, None]] + [np.asarray(states.info["task"][label]) for label in suite.objects], 1)
    keepout = np.concatenate([[suite.agent_keepout]] + [[p.keepout] * p.count for p in suite.objects.values()])
    assert np.all(np.abs(points) <= suite.extent - keepout[None, :, None] + 1e-6)
    gaps = np.linalg.norm(points[:, :, None] - points[:, None], axis=-1) - keepout[:, None] - keepout[None]
    assert np.all(gaps[:, ~np.eye(len(keepout), dtype=bool)] >= -1e-6)
    np.testing.assert_allclose(root[:, 2], 0.18)
    np.testing.assert_allclose(root[:, 4:6], 0.0, atol=1e-7)  # turned about the vertical only
    yaw = 2 * np.arctan2(root[:, 6], root[:, 3])
    assert np.ptp(np.mod(yaw, 2 * np.pi)) > 4.0
    assert np.all(np.abs(root[:, 7:] - np.asarray(body.reset_pose)) <= 0.1 + 1e-6)
    np.testing.assert_allclose(np.asarray(states.obs)[:, :3], 0.0, atol=1e-3)  # in free fall
    assert np.all(np.asarray(states.cost) == 0) and not np.any(np.asarray(states.done))


def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [f"SafetyAntGoal{i}-v0" for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymNavigationAnt, SafetyGoal) for i in served)
    assert crax.parse_id("SafetyAntVelocity-v1")[0] is not SafetyGymNavigationAnt  # Gymnasium's Ant there
    assert resolve_id("SafetyAntGoal1-v0") == "SafetyAntGoal1-v0"
    assert resolve_id("SafetyAntGoal1-v0", paper_variant=True) == "AntGoal1"
    face = safety_gymnasium.make("SafetyAntGoal1-v0")  # built, not compiled
    assert face.unwrapped.env.id == "SafetyAntGoal1-v0" and face.observation_space.shape == (88,)
    assert face.observation_space.dtype == np.float64 and face.action_space.shape == (8,)
    assert face.action_space.dtype == np.float64 and np.all(face.action_space.high == 1.0)
    assert TaskEnv(SafetyGoal(SafetyGymNavigationAnt(), 2)).id == "SafetyAntGoal2-v0"
    assert crax.parameters("SafetyAntGoal2-v0")["vases"].default == 10
    with pytest.raises(ValueError, match="SafetyAntGoal0-v0, SafetyAntGoal1-v0, SafetyAntGoal2-v0"):
        crax.make("SafetyAntGoal3-v0")
