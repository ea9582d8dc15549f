"""Safety-Gymnasium's Run and Fading tasks served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_run_fading_reference.json) was recorded by
tools/safety_gymnasium/sg_reference_run_fading.py in Safety-Gymnasium itself. Run is its own task; Fading is
the Goal task at the same level with objects fading from view, so its observations and costs are
checked against the Goal's recorded states (tests/data/safety_gym_reference.json) and its fading
against the alphas Safety-Gymnasium's own Fading steps leave in its model. The default tier builds
envs and compares definitions (nothing compiled); states and steps are in the slow tier.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.gymnasium import safety as safety_gymnasium
from crax.suites.safety_gym import SafetyFadingEasy, SafetyFadingHard, SafetyRun
from tests.env.safety_gym_agents import agent_of
from tests.env.safety_gym_fidelity import assert_rollout
from tests.env.safety_gym_reference import Replica, assert_spaces_and_keys, case, cost_terms, load, reference
from tests.env.safety_gym_tracks import Track

AGENTS = ("Point", "Car", "Ant")
RUN_IDS = [f"Safety{a}Run0-v0" for a in AGENTS]
FADING_IDS = [f"Safety{a}Fading{k}{level}-v0" for a in AGENTS for k in ("Easy", "Hard") for level in (0, 1, 2)]
SENSOR_ATOL = {"Point": 1e-4, "Car": 1e-3, "Ant": 2e-3}
"""Body sensors on a set state, per agent (Goal's own bounds are in tests/env/safety_gym_agents.py)."""
REWARD_ATOL = 5e-3
"""Run's reward per step over the Point's short rollouts (measured ≤ 2.5e-3, crossing x = −0.5 while
turning; ≤ 4.5e-4 running down). It is 60 times the step's progress, so 60 times the position's
error, which is float32's: 16 m from the origin a coordinate rounds to 1.9e-6 m at each substep."""
XY_ATOL = 5e-4
"""The Point's position along the short Run rollouts (m; measured ≤ 1.9e-4 after 30 steps straight
down the corridor: Safety-Gymnasium's Point drifts sideways from the 1e-10 m its float64 heading of
−π/2 leaves in x, crax's stays on x = 0; ≤ 5.9e-5 on the others)."""
DYNAMICS = Track({"xy": {None: 0.01}, "reward": {None: 0.02}}, horizon=100)
"""The Point's 100-step Run rollout: position (m) and reward per step (measured ≤ 1.8e-3 m, 4.4e-3)."""
ALPHA_ATOL = 1e-6
"""A fading class's fraction of its full alpha (Safety-Gymnasium's float32 rgba, decremented each
step, over its full alpha, against crax's float32 fraction; measured ≤ 7.8e-9)."""


def record(env_id: str) -> dict:
    return load("safety_gym_run_fading_reference.json")["tasks"][env_id]


@pytest.mark.parametrize("env_id", RUN_IDS + FADING_IDS)
def test_spaces_timing_and_definitions_are_safety_gymnasiums(env_id):
    rec, env = record(env_id), crax.make(env_id)
    assert_spaces_and_keys(env, rec)
    assert env.dt == pytest.approx(rec["dt"]) and env.episode_length == rec["num_steps"]
    suite = env.suite
    if isinstance(suite, SafetyRun):
        x0, y0, x1, y1 = rec["agent_placements"][0]
        assert (-suite.extent, float(suite.start_y[...]), suite.extent) == pytest.approx((x0, y0, x1)) and y1 == y0
        assert suite.agent_keepout == rec["agent_keepout"] and not suite.objects
        walls = rec["sigwalls"]
        assert suite.sigwalls.count == walls["num"] and walls["is_constrained"]
        assert (suite.sigwalls.x_bound, suite.sigwalls.half_size[1]) == (walls["locate_factor"], walls["size"])
        assert suite.floor_size == rec["floor_size"][0]
        assert float(suite.reward_factor[...]) == rec["reward_factor"] and rec["reward_clip"] is None
        np.testing.assert_array_equal(np.asarray(suite.target[...]), rec["far_point"])
    else:
        assert isinstance(suite, SafetyFadingEasy)
        assert isinstance(suite, SafetyFadingHard) == ("Hard" in env_id)
        assert float(suite.fading_steps[...]) == rec["fading_steps"]
        assert list(suite.fading) == rec["fading"]
        counts = {label: p.count for label, p in suite.objects.items() if label != "goal"}
        assert counts == {k: v for k, v in rec["counts"].items() if v}
        assert suite.extent == rec["extents"][2]


@pytest.mark.slow
@pytest.mark.parametrize("env_id", RUN_IDS)
def test_run_observations_and_costs_on_recorded_states(env_id):
    replica = Replica(env_id, record(env_id))
    for c in replica.record["states"]:
        state = replica.arrange(c)
        np.testing.assert_allclose(np.asarray(state.obs), c["obs"], atol=SENSOR_ATOL[agent_of(env_id).name],
                                   err_msg=c["name"])
        raw, terms = c["cost_raw"], cost_terms(state)
        assert set(terms) == {k.removeprefix("cost_") for k in raw if k != "cost_sum"} == {"out_of_boundary"}
        assert terms["out_of_boundary"] == raw["cost_out_of_boundary"] == c["cost_info"]["cost_out_of_boundary"], c["name"]
        assert float(state.cost) == c["cost_info"]["cost_sum"], c["name"]


@pytest.fixture(scope="module")
def point_run() -> Replica:
    return Replica("SafetyPointRun0-v0", record("SafetyPointRun0-v0"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["run_down", "run_up", "cross_x_plus", "cross_x_minus"])
def test_run_rewards_and_costs_on_recorded_rollouts(point_run, name):
    c = case(point_run.record, "rollouts", name)
    out = point_run.rollout(c)
    np.testing.assert_allclose(out["reward"], [s["reward"] for s in c["steps"]], atol=REWARD_ATOL, err_msg=name)
    np.testing.assert_allclose(out["metrics"]["reward/run"], out["reward"])
    assert np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in c["steps"]]), axis=-1).max() < XY_ATOL, name
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in c["steps"]], err_msg=name)
    np.testing.assert_array_equal(out["metrics"]["cost/out_of_boundary"],
                                  [s["cost_info"]["cost_out_of_boundary"] for s in c["steps"]], err_msg=name)


@pytest.mark.slow
def test_run_dynamics_stay_close(point_run):
    assert_rollout(point_run, "dynamics", DYNAMICS)


@pytest.mark.slow
def test_run_resets_start_where_safety_gymnasium_places_the_agent(point_run):
    states = point_run.resets(jax.random.split(jax.random.key(5), 64))
    xy = np.asarray(jax.vmap(lambda d: point_run.env.body.position(d)[:2])(states.data))
    x0, y0, x1, _ = point_run.record["agent_placements"][0]
    assert np.all((xy[:, 0] >= x0 - 1e-6) & (xy[:, 0] <= x1 + 1e-6)) and np.allclose(xy[:, 1], y0, atol=1e-5)
    assert xy[:, 0].std() > 0.08  # uniform over ±0.2: std 0.115
    yaw = np.asarray(jax.vmap(point_run.env.body.yaw)(states.data))
    assert np.histogram(yaw, bins=4, range=(-np.pi, np.pi))[0].min() >= 8  # a uniform yaw
    assert np.all(np.asarray(states.cost) == 0)


@pytest.mark.slow
def test_fading_observes_and_costs_as_safety_gymnasiums_goal():
    """Fading's observation and costs are Goal's: on the Point's recorded Goal states at level 2
    (every object class), crax's FadingHard gives what crax's Goal gives, which its own tests hold
    to Safety-Gymnasium's. Fading adds no observation or cost code of its own, for any agent (the
    Car's and the Ant's spaces and keys are checked above); FadingEasy is FadingHard's base class."""
    goal_record = reference()["tasks"]["SafetyPointGoal2-v0"]
    goal, fading = Replica("SafetyPointGoal2-v0", goal_record), Replica("SafetyPointFadingHard2-v0", goal_record)
    for c in goal_record["states"]:
        want, got = goal.arrange(c), fading.arrange(c)
        np.testing.assert_array_equal(np.asarray(got.obs), np.asarray(want.obs), err_msg=c["name"])
        assert cost_terms(got) == cost_terms(want) and float(got.cost) == float(want.cost), c["name"]


def _fading_rollout(env_id: str, c: dict) -> list[dict]:
    """Steps crax's env through a recorded Fading rollout: per step reward, cost, whether the goal
    was reached, cost terms and each fading class's fraction of its full alpha."""
    replica = Replica(env_id, record(env_id))
    state, rows = replica.arrange(c), []
    for a in np.asarray(c["actions"], np.float32):
        state = replica.step(state, jnp.asarray(a))
        rows.append({"reward": float(state.reward), "cost": float(state.cost),
                     "goal_met": bool(state.metrics["goals_reached"]), "terms": cost_terms(state),
                     "alpha": {label: float(v) for label, v in state.info["task"]["alpha"].items()}})
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["SafetyPointFadingEasy0-v0", "SafetyPointFadingHard2-v0"])
def test_fading_alphas_follow_safety_gymnasiums_steps(env_id):
    rec = record(env_id)
    c = rec["rollouts"][0]
    rows = _fading_rollout(env_id, c)
    assert set(c["alpha0"]) == set(rows[0]["alpha"])  # Safety-Gymnasium's object names are crax's labels
    met = [s["goal_met"] for s in c["steps"]]
    assert [r["goal_met"] for r in rows] == met
    last = met.index(True) + 1 if True in met else len(met)  # after a respawn the goals differ (random)
    np.testing.assert_allclose([r["reward"] for r in rows][:last], [s["reward"] for s in c["steps"]][:last],
                               atol=1e-4)  # Goal's reward (measured ≤ 3.7e-5)
    assert [r["cost"] for r in rows] == [s["cost"] for s in c["steps"]]
    for t, (row, ref) in enumerate(zip(rows, c["steps"], strict=True)):
        for label, fraction in row["alpha"].items():
            want = ref["alpha"][label] / rec["full_alpha"][label]
            assert fraction == pytest.approx(want, abs=ALPHA_ATOL), (env_id, t, label)
    seen = {label for row in rows for label, v in row["alpha"].items() if 0 < v < 1}
    assert seen == set(rows[0]["alpha"])  # every class faded somewhere along the rollout


@pytest.mark.slow
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    assert set(RUN_IDS + FADING_IDS) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[1] is SafetyRun for i in RUN_IDS)
    face = safety_gymnasium.make("SafetyPointRun0-v0")
    assert face.observation_space.shape == (12,) and face.unwrapped.env.episode_length == 500
    with pytest.raises(ValueError, match="SafetyPointRun0-v0"):
        crax.make("SafetyPointRun1-v0")
    with pytest.raises(ValueError, match="SafetyPointFadingHard2-v0"):
        crax.make("SafetyPointFadingHard3-v0")
