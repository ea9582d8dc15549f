"""Safety-Gymnasium's Ant Push 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself (``ant_push_records``); docs/safety_gymnasium.md lists the tolerances below
and the measured errors. One env per level (module-scoped). Push on the Ant is the heaviest
program here (the box's five boxes against the Ant's 13 geoms, RK4): level 0 compiles its
hand-placement program and its step in the default tier; levels 1 and 2 (hazards, pillars and
their contact cost) are in the slow tier.
"""

from __future__ import annotations

import numpy as np
import pytest

import crax
from crax.bodies.safety_navigation_ant import SafetyGymNavigationAnt
from crax.gymnasium import safety as safety_gymnasium
from crax.suites.safety_gym import SafetyPush
from tests.env.safety_gym_reference import Replica, assert_arena, assert_recorded_costs, case
from tests.env.test_safety_ant_goal import BODY, JOINT_ATOL, LIDAR_ATOL, SENSOR_ATOL

PILLAR_ACCEL_RTOL = 0.05
"""Accelerometer where a pillar presses 3 mm into the Ant's front left foot and shin, relative to
its norm (measured 3.5e-2). MuJoCo collides a capsule with a cylinder by MPR, whose depths and
normals are approximate and change between versions: MuJoCo 4.0 in C on Safety-Gymnasium's own
scene, cylinder and all, departs from its MuJoCo 2.3.3 by 4.2e-2 on the same state. crax's pillars
collide as capsules (exact). Where two pillars press on opposite feet (their forces cancel) it is 2.7e-5."""
DISTANCE_ATOL = 1e-5
"""Safety-Gymnasium's 3-D agent–box and box–goal distances on a set state (measured ≤ 5.4e-8)."""
FLIGHT_ATOL = 2e-5
"""Reward and each of its terms after one step of the Ant flying at, or past, the box (the terms
from Safety-Gymnasium's recorded distances; measured ≤ 2.6e-6)."""
DYNAMICS = {"short": 20, "xy": 0.03, "lidar": 0.25, "box_strike": 30, "box": 0.05, "box_mid": 50, "box_mid_tol": 0.3,
            "xy_all": 0.5, "return_mid": 0.5, "return_all": 1.0}
"""The walking gait of the Goal tests for 100 steps with the box in the Ant's path (it reaches the
box at step 25 and shoves it 0.7 m): the torso's position (m) and lidar bins over 20 steps, the
box's position up to steps 30 and 50, the return up to step 50, the torso's position and the
return over all 100. Measured, in two builds of the same program (XLA's default code generation;
the tests' cheaper one, which sums in another order): 1.1e-2 m; lidar 7.7e-2, 0.12 (the box 0.3 m
ahead by step 20, where 1 cm and 3e-2 rad move its aliased bins by 0.1); box 1.7e-2, 2.1e-2 m to
step 30 and 9.7e-2, 0.20 m to step 50; return 0.10, 0.31 to step 50; torso 7.1e-2, 0.13 m and
return 0.12, 0.43 over 100 (the return telescopes to the agent–box and box–goal distances, so it
carries about twice the box's error). Once struck, the 0.13 g box goes where float rounding sends
it: MuJoCo 4.0 in C (float64) on crax's scene from the recorded state moved by 1e-7 departs from
Safety-Gymnasium by as much (box up to 2.4e-2 m by step 30, 0.17 m by step 50, 0.30 m by step 100;
Ant up to 0.18 m)."""

LEVELS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
ID = "SafetyAntPush{}-v0"


@pytest.fixture(scope="module", params=LEVELS)
def replica(request) -> Replica:
    return Replica(ID.format(request.param))


def test_spaces_timing_keys_and_box_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_arena(env, rec)
    assert env.episode_length == 1000
    box = env.mj_model.body("push_box")
    assert box.mass[0] == pytest.approx(rec["box"]["mass"], rel=1e-9)
    np.testing.assert_allclose(box.inertia, rec["box"]["inertia"], rtol=1e-9)


@pytest.mark.slow
def test_observations_costs_and_distances_on_recorded_states(replica):
    suite = replica.env.suite
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        if "pillar" in c["name"]:
            assert np.linalg.norm(got[:3] - ref[:3]) <= PILLAR_ACCEL_RTOL * np.linalg.norm(ref[:3]), c["name"]
            np.testing.assert_allclose(got[3:12], ref[3:12], atol=SENSOR_ATOL, err_msg=c["name"])
        else:
            np.testing.assert_allclose(got[:12], ref[:12], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:BODY], ref[12:BODY], atol=JOINT_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[BODY:], ref[BODY:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c, counted=("pillars",))
        d_box, d_goal = suite._distances(state.data, state.info["task"]["goal"][0])
        assert float(d_box) == pytest.approx(c["dist_box"], abs=DISTANCE_ATOL), c["name"]
        assert float(d_goal) == pytest.approx(c["dist_box_goal"], abs=DISTANCE_ATOL), c["name"]


@pytest.mark.parametrize("replica", [0], indirect=True)  # the same at every level; level 2's step is not compiled
@pytest.mark.slow
def test_rewards_goal_and_death_on_recorded_steps(replica):
    for name in ("flight_at_box", "flight_past_box"):  # agent-box progress, nothing else
        c = case(replica.record, "rollouts", name)
        out, (step,) = replica.rollout(c), c["steps"]
        terms = {"box": c["dist_box"] - step["dist_box"], "box_goal": c["dist_box_goal"] - step["dist_box_goal"],
                 "goal": 0.0}
        for k, v in terms.items():
            assert out["metrics"][f"reward/{k}"][0] == pytest.approx(v, abs=FLIGHT_ATOL), (name, k)
        assert out["reward"][0] == pytest.approx(step["reward"], abs=FLIGHT_ATOL), name
    c = case(replica.record, "rollouts", "box_reaches_goal")  # the box set 0.25 m from the goal's centre
    out = replica.rollout(c)
    assert c["steps"][0]["goal_met"] and out["metrics"]["goals_reached"][0] == 1.0
    assert out["reward"][0] == pytest.approx(c["steps"][0]["reward"], abs=FLIGHT_ATOL)
    c = case(replica.record, "rollouts", "dies_on_its_back")
    out = replica.rollout(c)
    assert not c["steps"][0]["alive"] and list(out["done"]) == [1.0]


@pytest.mark.parametrize("replica", [0], indirect=True)
@pytest.mark.slow
def test_walking_into_the_box_stays_as_close_as_the_ants_sensitivity_allows(replica):
    c = case(replica.record, "rollouts", "dynamics")
    out, steps = replica.rollout(c), c["steps"]
    assert len(out["reward"]) == len(steps) == 100 and not out["done"].any()
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in steps]), axis=-1)
    box = out["xpos"][:, replica.env.suite.push_box.body_ids[0], :2]
    ref_box = np.asarray([s["box_pos"][:2] for s in steps])
    moved = np.linalg.norm(ref_box - ref_box[0], axis=-1)
    assert moved[:24].max() < 1e-3 and moved[-1] > 0.5  # first moved at step 25, shoved 0.5 m or more
    box_err = np.linalg.norm(box - ref_box, axis=-1)
    h = DYNAMICS["short"]
    assert xy[:h].max() < DYNAMICS["xy"]
    assert np.abs(out["obs"][:h, BODY:] - np.asarray([s["obs"] for s in steps[:h]])[:, BODY:]).max() < DYNAMICS["lidar"]
    assert box_err[:DYNAMICS["box_strike"]].max() < DYNAMICS["box"]
    assert box_err[:DYNAMICS["box_mid"]].max() < DYNAMICS["box_mid_tol"]
    assert xy.max() < DYNAMICS["xy_all"]
    ret = np.abs(np.cumsum(out["reward"]) - np.cumsum([s["reward"] for s in steps]))
    assert ret[:DYNAMICS["box_mid"]].max() < DYNAMICS["return_mid"] and ret.max() < DYNAMICS["return_all"]
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])


def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (SafetyGymNavigationAnt, SafetyPush) for i in served)
    face = safety_gymnasium.make(ID.format(1))  # built, not compiled
    assert face.observation_space.shape == (104,) and face.action_space.shape == (8,)
    assert crax.parameters(ID.format(2))["pillar_cost"].default == 1.0
    with pytest.raises(ValueError, match="SafetyAntPush0-v0, SafetyAntPush1-v0, SafetyAntPush2-v0"):
        crax.make("SafetyAntPush3-v0")
