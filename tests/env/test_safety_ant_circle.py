"""Safety-Gymnasium's Ant Circle 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``ant_circle_records``); docs/safety_gymnasium.md lists the tolerances
below and the measured errors. One env per level (module-scoped): the hand-placement program at
levels 0 and 2, the step at level 2 (its sigwalls cost across both axes); level 1 is in the slow
tier (it differs from level 2 only in the y walls' absence).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import crax
from crax.bodies.safety_navigation_ant import SafetyGymNavigationAnt
from crax.gymnasium import safety as safety_gymnasium
from crax.suites.safety_gym import SafetyCircle
from tests.env.safety_gym_reference import (
    Replica,
    assert_recorded_costs,
    assert_spaces_and_keys,
    assert_step_costs,
    case,
)
from tests.env.test_safety_ant_goal import BODY, JOINT_ATOL, LIDAR_ATOL, SENSOR_ATOL

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

FLIGHT = {"reward": 1e-5, "xy": 1e-5, "velocimeter": 5e-4, "lidar": 5e-4}
"""One step of the Ant thrown through the air from a set pose and velocity (spinning, with
controls): its reward, torso position (m), velocimeter and circle-lidar bins after the step.
Measured ≤ 1.4e-6, 2.2e-6 m, 1.5e-4, 1.3e-4 (the last two where it spins at 1.5 rad/s with its
legs driven; ≤ 2e-7 and 6e-7 otherwise)."""
PUSHED = {"reward": 2e-3, "xy": 5e-3}
"""One step of the standing Ant pushed sideways at 0.5 m/s, its feet sliding on the floor:
reward and position (measured 2.6e-4, 9.2e-4 m). A standing Ant is sensitive to everything: its
state rounded to float32 moves MuJoCo 4.0 in C (float64) by 1e-3 in one step."""
CROSSING_XY = 1e-4
"""Position (m) along the 5-step flights across a sigwall, landing beyond it (measured ≤ 3.8e-7);
the Ant ends 1.8 cm beyond the wall, so the cost per step compares exactly."""
DYNAMICS = {"short": 20, "xy": 0.03, "heading": 0.1, "reward": 0.01, "lidar": 0.15,
            "mid": 50, "xy_mid": 0.2, "xy_all": 0.5, "reward_all": 0.05}
"""The walking gait of the Goal tests for 100 steps from standing at (0.6, −0.3), inside every
sigwall (no cost in either engine): the torso's position (m), heading (rad), reward and circle-lidar
bins over 20 steps, its position over 50, its position and the reward over all 100 (measured,
levels 0-2, both builds: ≤ 1.1e-2 m, 3.1e-2 rad, 4.6e-3, 6.7e-2; 6.0e-2 m; 0.14 m, 2.1e-2).
Chaotic, as the Goal tests' dynamics (test_safety_ant_goal.DYNAMICS); the circle lidar sees one
point 0.3 to 1 m away across 16 bins, so a heading error of 3e-2 rad moves its bins by several
times that."""
REWARD_STEPS = ["reward_along_on_radius", "reward_against_on_radius", "reward_along_inside", "reward_outside",
                "reward_radial", "reward_near_origin"]
CROSSINGS = ["cross_x_plus", "cross_x_minus", "cross_y_minus"]
ID = "SafetyAntCircle{}-v0"


@pytest.fixture(scope="module", params=[0, pytest.param(1, marks=pytest.mark.slow), 2])
def replica(request) -> Replica:
    return Replica(ID.format(request.param))


@pytest.mark.slow
def test_spaces_timing_and_definitions_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_spaces_and_keys(env, rec)
    assert env.observation_size == 56
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
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=JOINT_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c, counted=("out_of_boundary",))


ROLLOUT_LEVELS = [2]
"""The Ant's Circle is stepped at level 2 (both walls; the reward and the Ant's dynamics as at level 0),
levels 0 and 1 on their recorded states."""


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.slow
def test_rewards_of_one_step_from_recorded_states(replica):
    for name in REWARD_STEPS:  # the Ant flying through the air, along, against, across the circle
        c = case(replica.record, "rollouts", name)
        out, (step,) = replica.rollout(c), c["steps"]
        assert out["reward"][0] == pytest.approx(step["reward"], abs=FLIGHT["reward"]), name
        assert out["metrics"]["reward/circle"][0] == pytest.approx(step["reward"], abs=FLIGHT["reward"]), name
        np.testing.assert_allclose(out["xy"][0], step["xy"], atol=FLIGHT["xy"], err_msg=name)
        np.testing.assert_allclose(out["obs"][0, 3:6], step["obs"][3:6], atol=FLIGHT["velocimeter"], err_msg=name)
        np.testing.assert_allclose(out["obs"][0, BODY:], step["obs"][BODY:], atol=FLIGHT["lidar"], err_msg=name)
        assert_step_costs(out, c)
    c = case(replica.record, "rollouts", "reward_standing_pushed")
    out, (step,) = replica.rollout(c), c["steps"]
    assert out["reward"][0] == pytest.approx(step["reward"], abs=PUSHED["reward"])
    np.testing.assert_allclose(out["xy"][0], step["xy"], atol=PUSHED["xy"])
    assert_step_costs(out, c)


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.parametrize("name", CROSSINGS)
def test_costs_per_step_across_the_sigwalls(replica, name):
    c = case(replica.record, "rollouts", name)
    out = replica.rollout(c)
    assert_step_costs(out, c)
    assert np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in c["steps"]]), axis=-1).max() < CROSSING_XY


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.slow
def test_dynamics_stay_as_close_as_the_ants_sensitivity_allows(replica):
    c = case(replica.record, "rollouts", "dynamics")
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) == 100 and not out["done"].any()
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
@pytest.mark.parametrize("replica", [0], indirect=True)
def test_resets_start_the_ant_within_safety_gymnasiums_placements(replica):
    env = replica.env  # reset's own draw, forwarded in C (Replica.resets)
    states = replica.resets(jax.random.split(jax.random.key(3), 32))
    root = np.asarray(jax.vmap(env.body.qpos)(states.data))
    xy = root[:, :2]
    assert np.all(np.abs(xy) <= env.suite.extent) and len({tuple(np.round(p, 4)) for p in xy}) == len(xy)
    np.testing.assert_allclose(root[:, 2], 0.18)
    assert np.all(np.asarray(states.cost) == 0)
    ref = 1.0 - np.linalg.norm(xy, axis=-1) / env.suite.sensors[0].max_dist  # the level Ant sees the origin
    np.testing.assert_allclose(np.asarray(states.obs)[:, BODY:].max(-1), ref, atol=1e-4)


def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymNavigationAnt, SafetyCircle) for i in served)
    assert crax.parameters(ID.format(1))["episode_length"].default == 500
    face = safety_gymnasium.make(ID.format(2))  # built, not compiled
    assert face.unwrapped.env.id == ID.format(2) and face.unwrapped.env.episode_length == 500
    assert face.observation_space.shape == (56,) and face.action_space.shape == (8,)
    with pytest.raises(ValueError, match="SafetyAntCircle0-v0, SafetyAntCircle1-v0, SafetyAntCircle2-v0"):
        crax.make("SafetyAntCircle3-v0")
