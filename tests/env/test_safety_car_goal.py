"""Safety-Gymnasium's Car Goal 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``car_goal_records``); docs/safety_gymnasium.md lists the tolerances below
and the measured errors. One env per level (module-scoped); the default tier checks level 0's
spaces, timing and keys only (nothing compiled); the recorded states, steps and the dynamics are in
the slow tier.
"""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.safety_car import SafetyGymCar
from crax.core.mjx import mjx
from crax.core.scene import Category
from crax.gymnasium import safety as safety_gymnasium
from crax.gymnasium.safety.make_args import resolve_id
from crax.suites.safety_gym import SafetyGoal
from tests.env.safety_gym_reference import Replica, assert_arena, assert_recorded_costs, case

BODY = 24
"""The Car's own readings: the first 24 entries of the observation (``SafetyGymCar.obs_keys``)."""
SENSOR_ATOL = 1e-4
"""Accelerometer, velocimeter, gyro, magnetometer on a set state (MuJoCo 2.3.3 in float64 vs MJX in
float32; measured ≤ 5.5e-5 (two hazards' state at level 2, its vases resting), ≤ 6.9e-6 at level 0, the resting and the rolling, driven Car's accelerometer, its wheels and
ball in contact with the floor, included)."""
CONTACT_SENSOR_ATOL = 1e-2
"""The accelerometer where a vase presses 3 mm into the Car (measured 6.9e-3 against the front
bumper, a box–box pair whose contact points differ between MJX and MuJoCo; 1.2e-3 against a wheel's
face, which MJX meets with the wheel's box (4 contact points), MuJoCo 2.3.3 with its cylinder (1));
on readings of about 9.8."""
BALL_ATOL = 1e-5
"""The rear ball's angular velocity and orientation matrix on a set state (measured ≤ 7e-8)."""
LIDAR_ATOL = 1e-5
"""Pseudo-lidar bins on a set state, the tilted Car's included (measured ≤ 1.1e-7)."""
REWARD_ATOL = 1e-4
"""Reward per step of a short drive from a set state (10 steps of approach; the goal reached), up to
the step that reaches the goal (then each engine draws its own new goal); measured ≤ 2.2e-6."""
DYNAMICS = {"short": 25, "xy": 1e-4, "heading": 1e-3, "reward": 1e-4, "lidar": 1e-3,
            "mid": 50, "xy_mid": 1e-2, "horizon": 150, "xy_all": 0.1}
"""The long rollout (a smooth action sequence, saturating the wheel motors, for 150 steps, 6 s, from
rest; it drives 0.6 m): bounds on the chassis' position (m), heading (rad), reward and lidar bins
over the first 25 steps, on its position over 50 and over all 150. Measured (levels 0 and 2):
≤ 7.3e-6 m, 1.7e-5 rad, 1.5e-6, 2.3e-5 over 25 steps; 9.2e-4 m (heading 9.1e-3 rad) over 50;
3.1e-2 m (heading 7.1e-2 rad, not bounded) over 150: once the motors reverse against the slipping
wheels the two engines part (docs/safety_gymnasium.md, The Car)."""

LEVELS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
ID = "SafetyCarGoal{}-v0"


@pytest.fixture(scope="module", params=LEVELS)
def replica(request) -> Replica:
    return Replica(ID.format(request.param))


def test_spaces_timing_keys_and_physics_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_arena(env, rec)  # every key, its size, Safety-Gymnasium's flattened order
    assert env.observation_size == sum(n for _, n in rec["obs_keys"]) and BODY == env.suite.body_obs_size
    assert env.dt == pytest.approx(rec["dt"]) == 0.04 and env.episode_length == rec["num_steps"] == 1000
    m = env.mj_model
    assert (m.opt.timestep, env.body.frame_skip, m.opt.integrator) == (0.004, 10, mujoco.mjtIntegrator.mjINT_EULER)
    # the wheels touch the floor only; boxes around them on the chassis take their object contacts
    wheel = (int(Category.AGENT_WHEEL), int(Category.FLOOR))
    assert all((m.geom_contype[m.geom(f"agent/{w}").id], m.geom_conaffinity[m.geom(f"agent/{w}").id]) == wheel
               for w in ("left", "right"))
    assert m.geom("agent/left_proxy").size.tolist() == pytest.approx([0.025, 0.05, 0.05])
    assert m.body("agent/torso").mass[0] == pytest.approx(0.0239)  # the proxies are massless


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        atol = CONTACT_SENSOR_ATOL if c["name"].startswith("vase_against") else SENSOR_ATOL
        np.testing.assert_allclose(got[:12], ref[:12], atol=atol, err_msg=c["name"])
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=BALL_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c)


@pytest.mark.slow
@pytest.mark.parametrize("replica", [0], indirect=True)  # levels 1-2 on their recorded states; the Point steps their vases
def test_rewards_and_the_goal_on_recorded_rollouts(replica):
    for name in ("approach_goal", "reach_goal"):
        c = case(replica.record, "rollouts", name)
        out = replica.rollout(c)
        met = [s["goal_met"] for s in c["steps"]]
        upto = met.index(True) + 1 if True in met else len(met)  # then each engine draws its own new goal
        np.testing.assert_allclose(out["reward"][:upto], [s["reward"] for s in c["steps"][:upto]], atol=REWARD_ATOL,
                                   err_msg=name)
        np.testing.assert_array_equal(out["metrics"]["goals_reached"], [float(s["goal_met"]) for s in c["steps"]])
        np.testing.assert_array_equal(out["cost"], [s["cost"] for s in c["steps"]])


@pytest.mark.slow
@pytest.mark.parametrize("replica", [0], indirect=True)  # the Car's dynamics do not depend on the level
def test_dynamics_stay_close(replica):
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


@pytest.mark.slow
@pytest.mark.parametrize("replica", [0], indirect=True)
def test_the_observation_is_what_mujocos_sensors_read(replica):
    """The 24 readings computed from the state equal MuJoCo's own sensor stage (the body's MJCF
    carries Safety-Gymnasium's sensors; ``ballquat_rear`` as ``mju_quat2Mat`` of its reading) on
    random states. Nothing is compiled (the observation runs op by op)."""
    body = replica.env.body
    m = copy.deepcopy(replica.env.mj_model)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    d = mujoco.MjData(m)
    q, v = slice(*body.qpos_adr), slice(*body.qvel_adr)
    rng = np.random.default_rng(0)

    def reading(key: str) -> np.ndarray:
        r = d.sensor(body.prefix + key).data
        if key != "ballquat_rear":
            return r
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, r)
        return mat

    for k in range(6):
        quat, ball = rng.normal(size=4), rng.normal(size=4)
        d.qpos[q] = [*rng.uniform(-1, 1, 2), rng.uniform(0.05, 0.3), *(quat / np.linalg.norm(quat)),
                     *rng.uniform(-3, 3, 2), *(ball / np.linalg.norm(ball))]
        d.qvel[v] = rng.normal(size=11)
        d.ctrl[:2] = rng.uniform(-1, 1, 2)
        mujoco.mj_forward(m, d)
        expect = np.concatenate([reading(key) for key, _ in body.obs_keys])
        got = np.asarray(body.observe(mjx.put_data(m, d, impl="jax")))
        np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-4, err_msg=f"state {k}")


@pytest.mark.slow
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymCar, SafetyGoal) for i in served)
    assert resolve_id(ID.format(1)) == ID.format(1)
    face = safety_gymnasium.make(ID.format(1))  # built, not compiled
    assert face.unwrapped.env.id == ID.format(1) and face.observation_space.shape == (72,)
    assert face.observation_space.dtype == np.float64 and face.action_space.shape == (2,)
    assert face.action_space.dtype == np.float64 and np.all(face.action_space.high == 1.0)
    assert crax.parameters(ID.format(2))["vases"].default == 10
    with pytest.raises(ValueError, match="SafetyCarGoal0-v0, SafetyCarGoal1-v0, SafetyCarGoal2-v0"):
        crax.make("SafetyCarGoal3-v0")
