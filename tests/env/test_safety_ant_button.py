"""Safety-Gymnasium's Ant Button 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``ant_button_records``); docs/safety_gymnasium.md lists the tolerances below
and the measured errors. One env per level (module-scoped): its hand-placement program, and its step
at level 0 (:data:`ROLLOUT_LEVELS`). Only level 0's spaces are in the default
tier: every program here is the Ant's (RK4), against four buttons and up to six gremlins.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.safety_navigation_ant import SafetyGymNavigationAnt
from crax.gymnasium import safety as safety_gymnasium
from crax.suites.safety_gym import SafetyButton
from tests.env.safety_gym_reference import ButtonReplica, assert_arena, assert_recorded_costs, case, lidar_slices
from tests.env.test_safety_ant_goal import BODY, DYNAMICS, JOINT_ATOL, LIDAR_ATOL, SENSOR_ATOL

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

CONTACT_ACCEL_RTOL = 1e-4
"""Accelerometer where buttons or gremlins press 3 mm into the Ant's feet, relative to its norm
(measured ≤ 3.5e-5: 2.6e-4 m/s² where two buttons press, 3.4e-4 where two gremlins do; the
other sensors as Goal's). States are placed with MJX's forward pass here, not MuJoCo's in C as in
the other Safety-Gymnasium files: MuJoCo 4.0 in C, on the same contacts, solves the button pressing
into a foot to another acceleration (``touching_goal_button``: 6.4e-2 of the norm off)."""
STRIKE_REWARD_ATOL = 3e-2
"""Reward of each step of ``press_goal_button`` and ``press_wrong_button``: the Ant in its reset
pose 0.28 m up flies at 2 m/s into button 0, a foot 1 cm deep in it after the second step. The
strike is a knife edge: Safety-Gymnasium itself from that state moved by 1e-7 m ends the strike
3.4e-3 m and the step after 1.6e-2 m off (MuJoCo 4.0 in C on its scene: the same), and so does crax
(torso 3.4e-3 m, then 1.6e-2 m); a step's reward differences two of these (measured ≤ 1.9e-2, the
step after the strike at level 2). Whether it presses, the timer and every cost indicator agree
exactly; the raw count of contact points need not (level 2's wrong button: 2 in Safety-Gymnasium,
where a second geom of the leg touches it too, 1 in crax)."""
STRIKE_LIDAR_ATOL = 0.1
"""Lidar bins along the strike rollouts (the torso 1.6e-2 m off after the strike, as above: measured ≤ 7.4e-2)."""
DEATH_ATOL = 1e-4
"""Reward of the step in which the Ant, on its back, dies (measured 0)."""

LEVELS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
ROLLOUT_LEVELS = [pytest.param(0, marks=pytest.mark.slow)]
"""The Ant's Button is stepped at level 0 only; levels 1 and 2 on their recorded states (the strike on a
wrong button costs there), their gremlins by the Point at level 1 (docs/safety_gymnasium.md, "Which
levels the tests step")."""
ID = "SafetyAntButton{}-v0"


@pytest.fixture(scope="module", params=LEVELS)
def replica(request) -> ButtonReplica:
    return ButtonReplica(ID.format(request.param), engine="mjx")  # see CONTACT_ACCEL_RTOL


def test_spaces_timing_and_keys_are_safety_gymnasiums(replica):
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
        if "touching" in c["name"] or "against" in c["name"]:
            assert np.linalg.norm(got[:3] - ref[:3]) <= CONTACT_ACCEL_RTOL * np.linalg.norm(ref[:3]), c["name"]
            np.testing.assert_allclose(got[3:12], ref[3:12], atol=SENSOR_ATOL, err_msg=c["name"])
        else:
            np.testing.assert_allclose(got[:12], ref[:12], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=JOINT_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c, counted=("buttons",), timed=True)
    names = {c["name"] for c in replica.record["states"]}
    assert {"touching_goal_button", "touching_wrong_button", "touching_two_wrong_buttons"} <= names


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.parametrize("name", ["press_goal_button", "press_wrong_button"])
def test_a_strike_presses_ticks_the_timer_and_costs_as_recorded(replica, name):
    c = case(replica.record, "rollouts", name)
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) == 14 and not out["done"].any()
    met = np.asarray([s["goal_met"] for s in steps], np.float32)
    assert list(met.nonzero()[0]) == ([1] if name == "press_goal_button" else [])  # the second step strikes
    np.testing.assert_array_equal(out["metrics"]["goals_reached"], met)
    np.testing.assert_allclose(out["reward"], [s["reward"] for s in steps], atol=STRIKE_REWARD_ATOL)
    np.testing.assert_array_equal(out["timer"], [s["timer"] for s in steps])
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])
    for i, s in enumerate(steps):
        for key, v in out["metrics"].items():  # each term's indicator, as Safety-Gymnasium's info reports it
            if key.startswith("cost/"):
                assert float(v[i] > 0) == s["cost_info"].get(key.replace("/", "_"), 0.0), (name, i, key)
        for key, part in lidar_slices(replica.record).items():
            if key == "goal_lidar" and s["goal_met"] and out["own_goal_button"][i] != s["goal_button"]:
                continue  # crax drew another goal button on this press (synchronised from the next step)
            np.testing.assert_allclose(out["obs"][i][part], np.asarray(s["obs"])[part], atol=STRIKE_LIDAR_ATOL,
                                       err_msg=f"{name} {i} {key}")
    buttons = lidar_slices(replica.record)["buttons_lidar"]
    blank = [not np.any(out["obs"][i][buttons]) for i in range(len(steps))]
    if name == "press_goal_button":  # the buttons lidar reads 0 from the press until the timer has run out
        assert blank == [1 <= i < 11 for i in range(len(steps))]
    else:
        assert not any(blank)
        assert (out["cost"][1] == 1.0) == replica.env.suite.buttons_constrained  # the strike costs at levels 1-2


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
def test_death_on_its_back_as_recorded(replica):
    c = case(replica.record, "rollouts", "dies_on_its_back")  # torso on the floor: 0.0625 m < 0.08 m
    out = replica.rollout(c)
    (step,) = c["steps"]
    assert not step["alive"] and list(out["done"]) == [1.0] and out["metrics"]["env/nonfinite_state"][0] == 0
    assert out["reward"][0] == pytest.approx(step["reward"], abs=DEATH_ATOL) and out["cost"][0] == step["cost"]


@pytest.mark.parametrize("replica", [pytest.param(0, marks=pytest.mark.slow)], indirect=True)
def test_walking_among_the_buttons_stays_as_close_as_the_ants_sensitivity_allows(replica):
    """Goal's gait and bounds (tests/env/test_safety_ant_goal.py's DYNAMICS), the buttons seen all along."""
    c = case(replica.record, "rollouts", "dynamics")
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) == DYNAMICS["horizon"] and not out["done"].any()
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    heading = np.abs(np.angle(np.exp(1j * (out["heading"] - np.asarray([s["yaw"] for s in steps])))))
    h, m = DYNAMICS["short"], DYNAMICS["mid"]
    assert xy[:h].max() < DYNAMICS["xy"] and heading[:h].max() < DYNAMICS["heading"]
    assert np.abs(out["reward"][:h] - [s["reward"] for s in steps[:h]]).max() < DYNAMICS["reward"]
    ref_obs = np.asarray([s["obs"] for s in steps])
    assert np.abs(out["obs"][:h, BODY:] - ref_obs[:h, BODY:]).max() < DYNAMICS["lidar"]
    assert xy[:m].max() < DYNAMICS["xy_mid"] and xy.max() < DYNAMICS["xy_all"]
    assert not any(s["goal_met"] for s in steps) and not out["metrics"]["goals_reached"].any()


@pytest.mark.slow
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymNavigationAnt, SafetyButton) for i in served)
    face = safety_gymnasium.make(ID.format(1))  # built, not compiled
    assert face.unwrapped.env.id == ID.format(1)
    assert face.observation_space.shape == (104,) and face.action_space.shape == (8,)
    params = crax.parameters(ID.format(2))
    assert params["gremlins"].default == 6 and params["buttons_constrained"].default
    with pytest.raises(ValueError, match="SafetyAntButton0-v0, SafetyAntButton1-v0, SafetyAntButton2-v0"):
        crax.make("SafetyAntButton3-v0")
