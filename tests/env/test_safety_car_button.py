"""Safety-Gymnasium's Car Button 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``car_button_records``); docs/safety_gymnasium.md lists the tolerances
below and the measured errors. One env per level (module-scoped); the default tier checks level 0's
spaces and keys only (nothing compiled); the recorded states and steps are in the slow tier. The
Button suite itself (gremlins circling, layouts, the substep hook) is checked on the Point
(test_safety_point_button.py); here, what the Car changes: its readings, its contacts with
buttons and gremlins (on recorded states), its presses and its dynamics (level 0).
"""

from __future__ import annotations

import numpy as np
import pytest

import crax
from crax.bodies.safety_car import SafetyGymCar
from crax.gymnasium import safety as safety_gymnasium
from crax.suites.safety_gym import SafetyButton
from tests.env.safety_gym_reference import ButtonReplica, assert_arena, assert_recorded_costs, case
from tests.env.test_safety_car_goal import (
    BALL_ATOL,
    BODY,
    CONTACT_SENSOR_ATOL,
    DYNAMICS,
    LIDAR_ATOL,
    REWARD_ATOL,
    SENSOR_ATOL,
)

BOX_BOX_STATES = ("gremlin_against_bumper", "gremlin_against_wheel")
"""A gremlin (a box) pressed into the Car's bumper or a wheel's face: MJX and MuJoCo's versions find
other contact points for a box–box pair (and MuJoCo 2.3.3 meets the wheel's cylinder, crax its box:
MuJoCo 4.0 in C, which forwards the placed states, counts 4 points on the wheel where 2.3.3 counts
1), so the raw ``cost/gremlins`` (one per contact point) may differ while its indicator agrees."""
PRESS = {"xy": 1e-4, "lidar": 1e-3}
"""The drives into a button (30 and 20 steps, pressed on step 11, then pushing against it): the
chassis' position (m) and lidar bins at every step (measured ≤ 6.0e-6 m, 2.2e-5)."""

LEVELS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
ID = "SafetyCarButton{}-v0"


@pytest.fixture(scope="module", params=LEVELS)
def replica(request) -> ButtonReplica:
    return ButtonReplica(ID.format(request.param))


def test_spaces_timing_and_keys_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_arena(env, rec)
    assert env.episode_length == 1000


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        pressed = c["name"] in BOX_BOX_STATES
        np.testing.assert_allclose(got[:3], ref[:3], atol=CONTACT_SENSOR_ATOL if pressed else SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[3:12], ref[3:12], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=BALL_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        counted = ("buttons",) if c["name"] in BOX_BOX_STATES else ("buttons", "gremlins")  # box–box: points differ
        assert_recorded_costs(state, c, counted=counted, timed=True)


ROLLOUT_LEVELS = [pytest.param(0, marks=pytest.mark.slow)]
"""The Car's Button is stepped at level 0 only; levels 1 and 2 on their recorded states, their gremlins
and constrained buttons by the Point at level 1 (docs/safety_gymnasium.md, "Which levels the tests step")."""


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.parametrize("name", ["press_goal_button", "press_wrong_button"])
def test_presses_timer_rewards_and_costs_on_recorded_rollouts(replica, name):
    c = case(replica.record, "rollouts", name)
    out, steps = replica.rollout(c), c["steps"]
    met = np.asarray([s["goal_met"] for s in steps], np.float32)
    assert met.any() == (name == "press_goal_button")
    np.testing.assert_array_equal(out["metrics"]["goals_reached"], met)
    np.testing.assert_allclose(out["reward"], [s["reward"] for s in steps], atol=REWARD_ATOL)
    np.testing.assert_array_equal(out["timer"], [s["timer"] for s in steps])
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])
    for i, s in enumerate(steps):
        for key, v in out["metrics"].items():  # each term's indicator, as Safety-Gymnasium's info reports it
            if key.startswith("cost/"):
                assert float(v[i] > 0) == s["cost_info"].get(key.replace("/", "_"), 0.0), (name, i, key)
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    assert xy.max() < PRESS["xy"]
    lidar = np.abs(out["obs"][:, BODY:] - np.asarray([s["obs"] for s in steps])[:, BODY:])
    own = np.asarray(out["own_goal_button"]) != np.asarray([s["goal_button"] for s in steps])
    lidar[own] = 0.0  # crax drew another goal button on this press (synchronised from the next step)
    assert lidar.max() < PRESS["lidar"]


@pytest.mark.slow
@pytest.mark.parametrize("replica", [0], indirect=True)
def test_dynamics_stay_close(replica):
    """The Goal tests' 150-step drive, with the buttons about: as close as on Goal (DYNAMICS)."""
    c = case(replica.record, "rollouts", "dynamics")
    out, steps = replica.rollout(c), c["steps"]
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    h = DYNAMICS["short"]
    assert xy[:h].max() < DYNAMICS["xy"]
    assert np.abs(out["reward"][:h] - np.asarray([s["reward"] for s in steps[:h]])).max() < DYNAMICS["reward"]
    lidar = np.asarray([s["obs"] for s in steps[:h]])[:, BODY:]
    assert np.abs(out["obs"][:h, BODY:] - lidar).max() < DYNAMICS["lidar"]
    assert xy[:DYNAMICS["mid"]].max() < DYNAMICS["xy_mid"] and xy.max() < DYNAMICS["xy_all"]
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])


@pytest.mark.slow
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymCar, SafetyButton) for i in served)
    face = safety_gymnasium.make(ID.format(1))  # built, not compiled
    assert face.observation_space.shape == (88,) and face.action_space.shape == (2,)
    with pytest.raises(ValueError, match="SafetyCarButton0-v0, SafetyCarButton1-v0, SafetyCarButton2-v0"):
        crax.make("SafetyCarButton3-v0")
