"""Safety-Gymnasium's Car Circle 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``car_circle_records``); docs/safety_gymnasium.md lists the tolerances
below and the measured errors. One env per level (module-scoped); the default tier checks level
0's spaces and definitions only (nothing compiled); the recorded states, steps and the dynamics
are in the slow tier.
"""

from __future__ import annotations

import numpy as np
import pytest

import crax
from crax.bodies.safety_car import SafetyGymCar
from crax.gymnasium import safety as safety_gymnasium
from crax.suites.safety_gym import SafetyCircle
from tests.env.safety_gym_reference import (
    Replica,
    assert_recorded_costs,
    assert_spaces_and_keys,
    assert_step_costs,
    case,
)
from tests.env.test_safety_car_goal import BALL_ATOL, BODY, LIDAR_ATOL, SENSOR_ATOL

ONE_STEP = {"reward": 1e-5, "xy": 1e-5, "velocimeter": 1e-4, "lidar": 1e-4}
"""One step of the Car rolling from a set pose and velocity (driven, coasting, reversing): its
reward, chassis position (m), velocimeter and circle-lidar bins after the step. Measured
≤ 2.9e-7, 5.7e-7 m, 1.3e-5, 2.0e-5 (rewards 1e-3 to 0.06)."""
CROSSING_XY = 1e-4
"""Position (m) along the 12-step drives across a sigwall (measured ≤ 1.0e-6 m); the cost per
step compares exactly."""
DYNAMICS = {"short": 25, "xy": 1e-4, "heading": 1e-3, "reward": 1e-4, "lidar": 1e-3,
            "mid": 50, "xy_mid": 1e-2, "xy_all": 0.1, "reward_all": 0.02}
"""The Goal tests' long rollout (150 steps) from rest at (0.5, 0) facing +y: the chassis' position
(m), heading (rad), reward and circle-lidar bins over 25 steps, its position over 50, its position
and reward over all 150. Measured (level 0; level 2 not yet run): ≤ 7.3e-6 m, 1.7e-5 rad, 1.0e-6, 2.3e-5 over 25
steps; 9.2e-4 m over 50; 3.1e-2 m, 8.5e-3 over 150 (the lidar then 0.14, not bounded)."""
REWARD_STEPS = ["reward_along_on_radius", "reward_against_on_radius", "reward_along_inside", "reward_outside",
                "reward_radial", "reward_near_origin"]
CROSSINGS = ["cross_x_plus", "cross_x_minus", "cross_y_minus"]
ID = "SafetyCarCircle{}-v0"


@pytest.fixture(scope="module", params=[0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def replica(request) -> Replica:
    return Replica(ID.format(request.param))


def test_spaces_timing_and_definitions_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_spaces_and_keys(env, rec)
    assert env.observation_size == 40
    assert env.dt == pytest.approx(rec["dt"]) and env.episode_length == rec["num_steps"] == 500
    suite = env.suite
    assert suite.sensors[0].max_dist == rec["lidar_max_dist"] and suite.circle.radius == rec["circle_radius"]
    assert rec["agent_placements"] == [[-suite.extent, -suite.extent, suite.extent, suite.extent]]
    assert suite.agent_keepout == rec["agent_keepout"] and not suite.objects
    walls = rec["sigwalls"]
    assert suite.sigwalls.count == (walls["num"] if walls else 0)


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        np.testing.assert_allclose(got[:12], ref[:12], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=BALL_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c, counted=("out_of_boundary",))


ROLLOUT_LEVELS = [pytest.param(2, marks=pytest.mark.slow)]
"""The Car's Circle is stepped at level 2 (both walls; the reward and the Car's dynamics as at level 0),
levels 0 and 1 on their recorded states."""


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
def test_rewards_of_one_step_from_recorded_states(replica):
    for name in REWARD_STEPS:  # rolling along, against, across the circle; on, inside, outside its radius
        c = case(replica.record, "rollouts", name)
        out, (step,) = replica.rollout(c), c["steps"]
        assert out["reward"][0] == pytest.approx(step["reward"], abs=ONE_STEP["reward"]), name
        assert out["metrics"]["reward/circle"][0] == pytest.approx(step["reward"], abs=ONE_STEP["reward"]), name
        np.testing.assert_allclose(out["xy"][0], step["xy"], atol=ONE_STEP["xy"], err_msg=name)
        np.testing.assert_allclose(out["obs"][0, 3:6], step["obs"][3:6], atol=ONE_STEP["velocimeter"], err_msg=name)
        np.testing.assert_allclose(out["obs"][0, BODY:], step["obs"][BODY:], atol=ONE_STEP["lidar"], err_msg=name)
        assert_step_costs(out, c)


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.parametrize("name", CROSSINGS)
def test_costs_per_step_across_the_sigwalls(replica, name):
    c = case(replica.record, "rollouts", name)
    out = replica.rollout(c)
    assert_step_costs(out, c)
    assert np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in c["steps"]]), axis=-1).max() < CROSSING_XY


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
def test_dynamics_stay_close(replica):
    c = case(replica.record, "rollouts", "dynamics")
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) == 150 and not out["done"].any()
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    heading = np.abs(np.angle(np.exp(1j * (out["heading"] - np.asarray([s["yaw"] for s in steps])))))
    reward = np.abs(out["reward"] - np.asarray([s["reward"] for s in steps]))
    h = DYNAMICS["short"]
    assert xy[:h].max() < DYNAMICS["xy"] and heading[:h].max() < DYNAMICS["heading"]
    assert reward[:h].max() < DYNAMICS["reward"]
    lidar = np.asarray([s["obs"] for s in steps[:h]])[:, BODY:]
    assert np.abs(out["obs"][:h, BODY:] - lidar).max() < DYNAMICS["lidar"]
    assert xy[:DYNAMICS["mid"]].max() < DYNAMICS["xy_mid"] and xy.max() < DYNAMICS["xy_all"]
    assert reward.max() < DYNAMICS["reward_all"]
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])


@pytest.mark.slow
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymCar, SafetyCircle) for i in served)
    assert crax.parameters(ID.format(1))["episode_length"].default == 500
    face = safety_gymnasium.make(ID.format(2))  # built, not compiled
    assert face.unwrapped.env.id == ID.format(2) and face.unwrapped.env.episode_length == 500
    assert face.observation_space.shape == (40,) and face.action_space.shape == (2,)
    with pytest.raises(ValueError, match="SafetyCarCircle0-v0, SafetyCarCircle1-v0, SafetyCarCircle2-v0"):
        crax.make("SafetyCarCircle3-v0")
