"""Safety-Gymnasium's Point Button 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself; docs/safety_gymnasium.md lists the tolerances below and why they are what
they are. Recorded states are forwarded by MuJoCo in C and observed by one small program per level;
one compiled step at levels 0 and 1 (module-scoped); level 2 (six gremlins) in the slow tier, its
step not compiled (:data:`ROLLOUT_LEVELS`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.bodies.safety_point import SafetyGymPoint
from crax.gymnasium import safety as safety_gymnasium
from crax.objects.placement import layout_fits, sample_fitting_layout, sample_layout
from crax.suites.safety_gym import SafetyButton
from crax.suites.task_env import TaskEnv
from tests import trees
from tests.env.safety_gym_reference import (
    ButtonReplica,
    assert_arena,
    assert_recorded_costs,
    case,
    cost_terms,
    lidar_slices,
)

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

SENSOR_ATOL = 1e-4
"""Body sensors on a set state (MuJoCo 2.3.3 in float64 vs MJX in float32)."""
BOX_BOX_STATES = ("gremlin_at_front_box",)
"""States where the agent's front box presses into a gremlin: engines find other contact points and
depths for a box–box pair (MJX 4 points at 0.031 m against MuJoCo 2.3.3's 2 at 0.014 m here; MuJoCo
4.0 in C, which forwards the placed states, 2 points, its accelerometer 0.26 off), so the
accelerometer (the contact's push) and the raw contact count are not compared; the indicator is."""
LIDAR_ATOL = 1e-5
"""Pseudo-lidar bins on a set state."""
REWARD_ATOL = 1e-4
"""Reward per step along the press rollouts."""
ROLLOUT_LIDAR_ATOL = 1e-3
"""Lidar bins along the press rollouts (buttons, goal; the agent pushes against a button)."""
GREMLIN_ATOL = 2e-3
"""Gremlin box positions (m) over the 60 steps of ``gremlins_circle``. Each 8 mg box follows its
circling mocap body through a soft weld; the largest error is on the first step, as the weld jerks
it from rest on the floor (zero depth) 0.35 m sideways: measured ≤ 1.1e-3 m, decaying to ≤ 1.1e-4 m
from step 10 on. MuJoCo 4.0 in C on Safety-Gymnasium's own scene ends that step 2.8e-4 m off, and
1.1e-3 m off with the boxes started 1e-12 m higher."""
GREMLIN_LIDAR_ATOL = 5e-3
"""The gremlins lidar along ``gremlins_circle`` (measured ≤ 2.1e-3, on the first step)."""
MOCAP_ATOL = 1e-5
"""The gremlins' mocap positions (m) after each step, set from ``data.time`` before every substep
(measured ≤ 2.7e-6 over 60 steps: crax's clock is float32)."""
TIME_ATOL = 5e-5
"""``data.time`` after 60 steps (float32 sums of 0.002 s: measured 8.3e-6 s)."""
DYNAMICS = {"horizon": 150, "xy": 0.02, "yaw": 0.05, "lidar": 0.05}
"""The long rollout: bounds on the agent's position (m), yaw (rad) and lidar bins over 150 steps,
as Goal's (docs/safety_gymnasium.md)."""

LEVELS = [0, 1, pytest.param(2, marks=pytest.mark.slow)]  # level 2: six gremlins, the costliest programs


@pytest.fixture(scope="module", params=LEVELS)
def replica(request) -> ButtonReplica:
    return ButtonReplica(f"SafetyPointButton{request.param}-v0")


@pytest.mark.slow
def test_spaces_timing_and_keys_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_arena(env, rec)


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        sensors = slice(3, 12) if c["name"] in BOX_BOX_STATES else slice(0, 12)
        np.testing.assert_allclose(got[sensors], ref[sensors], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:], ref[12:], atol=LIDAR_ATOL, err_msg=c["name"])
        counted = ("buttons",) if c["name"] in BOX_BOX_STATES else ("buttons", "gremlins")  # box–box: points differ
        assert_recorded_costs(state, c, counted=counted, timed=True)


ROLLOUT_LEVELS = [0, 1]
"""Levels whose step is compiled and run: level 2 differs from level 1 only in its counts (more gremlins
and hazards), which the recorded states above check; its step is
the costliest program of the file. The 150-step trajectory runs at level 0 only (the Point's dynamics
do not depend on the level)."""


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.parametrize("name", ["press_goal_button", "press_wrong_button"])
@pytest.mark.slow
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
        for key, part in lidar_slices(replica.record).items():
            if key == "goal_lidar" and s["goal_met"] and out["own_goal_button"][i] != s["goal_button"]:
                continue  # crax drew another goal button on this press (synchronised from the next step)
            np.testing.assert_allclose(out["obs"][i][part], np.asarray(s["obs"])[part], atol=ROLLOUT_LIDAR_ATOL,
                                       err_msg=f"{name} {i} {key}")
    if name == "press_goal_button":  # the buttons lidar reads 0 from the press until the timer has run out
        press = int(np.argmax(met))
        buttons = lidar_slices(replica.record)["buttons_lidar"]
        blank = [not np.any(out["obs"][i][buttons]) for i in range(len(steps))]
        assert blank == [press <= i < press + 10 for i in range(len(steps))]


@pytest.mark.parametrize("replica", [1], indirect=True)
def test_gremlins_circle_as_recorded(replica):
    c = case(replica.record, "rollouts", "gremlins_circle")
    out, steps = replica.rollout(c), c["steps"]
    placed = len([g for g in c["layout"]["gremlins"] if abs(g[0]) < 10])
    np.testing.assert_allclose(out["time"], [s["time"] for s in steps], atol=TIME_ATOL)
    ref_mocap = np.asarray([s["gremlins_mocap"] for s in steps])[:, :placed]
    anchors = np.asarray(c["layout"]["gremlins"])[:placed, :2]
    # Safety-Gymnasium's mocaps circle the origin, its welds add the layout position; crax's mocaps carry it
    np.testing.assert_allclose(out["gremlins_mocap"][:, :placed, :2], ref_mocap[..., :2] + anchors, atol=MOCAP_ATOL)
    np.testing.assert_allclose(out["gremlins_mocap"][:, :placed, 2], ref_mocap[..., 2], atol=MOCAP_ATOL)
    ref_xy = np.asarray([s["gremlins"] for s in steps])[:, :placed, :2]
    assert np.abs(ref_xy - anchors).max() > 0.3  # they do move: a full jump of `travel` and then along the circle
    np.testing.assert_allclose(out["gremlins"][:, :placed], ref_xy, atol=GREMLIN_ATOL)
    part = lidar_slices(replica.record)["gremlins_lidar"]
    np.testing.assert_allclose(out["obs"][:, part], np.asarray([s["obs"] for s in steps])[:, part],
                               atol=GREMLIN_LIDAR_ATOL)
    assert not out["cost"].any() and not any(s["cost"] for s in steps)


@pytest.mark.parametrize("replica", [1], indirect=True)
def test_a_gremlin_sweeping_the_agent_costs_as_recorded(replica):
    c = case(replica.record, "rollouts", "gremlin_sweeps_agent")
    out, steps = replica.rollout(c), c["steps"]
    ref = np.asarray([s["cost_info"]["cost_gremlins"] for s in steps])
    got = (out["metrics"]["cost/gremlins"] > 0).astype(float)
    last = int(np.nonzero(ref)[0][-1])
    assert ref[:last + 1].sum() >= 20  # a long contact: the gremlin pushes the agent along
    # Same first touch, in contact at every step Safety-Gymnasium is. Pushed, the agent moves less far
    # in MuJoCo 4.0 (C, on Safety-Gymnasium's own scene, as in MJX) than in MuJoCo 2.3.3, so the
    # contact lasts longer after that (docs/safety_gymnasium.md).
    np.testing.assert_array_equal(got[:last + 1], ref[:last + 1])
    np.testing.assert_array_equal(out["cost"][:last + 1], [s["cost"] for s in steps][:last + 1])
    raw = np.asarray([s["cost_raw"]["cost_gremlins"] for s in steps])
    np.testing.assert_array_equal(out["metrics"]["cost/gremlins"][:last + 1], raw[:last + 1])  # sphere–box: 1 point


@pytest.mark.parametrize("replica", [0], indirect=True)
@pytest.mark.slow
def test_dynamics_stay_close_to_safety_gymnasiums(replica):
    c = case(replica.record, "rollouts", "dynamics")
    out = replica.rollout(c)
    h = DYNAMICS["horizon"]
    ref_xy = np.asarray([s["xy"] for s in c["steps"]])[:h]
    ref_yaw = np.asarray([s["yaw"] for s in c["steps"]])[:h]
    ref_lidar = np.asarray([s["obs"] for s in c["steps"]])[:h, 12:]
    assert np.linalg.norm(out["xy"][:h] - ref_xy, axis=-1).max() < DYNAMICS["xy"]
    assert np.abs(out["yaw"][:h] - ref_yaw).max() < DYNAMICS["yaw"]
    assert np.abs(out["obs"][:h, 12:] - ref_lidar).max() < DYNAMICS["lidar"]


@pytest.mark.parametrize("replica", [1], indirect=True)
def test_the_gremlins_mocaps_follow_the_clock_at_every_substep(replica):
    """After a step the mocaps sit where the last substep's hook put them, from that substep's
    start time (not the step's start or end): the hook ran before each ``mjx.step``."""
    c = case(replica.record, "rollouts", "gremlins_circle")
    state = replica.step(replica.arrange(c), jnp.zeros(2))
    suite = replica.env.suite
    gremlins = suite.gremlins
    t_last = float(state.data.time) - replica.env.mj_model.opt.timestep
    anchors = np.asarray(state.info["task"]["gremlin_anchors"])
    want = anchors + gremlins.travel * np.array([np.sin(t_last), np.cos(t_last)])
    got = np.asarray(state.data.mocap_pos)[list(gremlins.mocap_ids)]
    np.testing.assert_allclose(got[:, :2], want, atol=1e-6)
    np.testing.assert_allclose(got[:, 2], gremlins.size, atol=1e-7)


def test_a_crowded_layout_is_drawn_again_until_it_fits():
    """Six objects of keepout 0.4 in ±1.3 (each in its shrunk square): one draw places them all clear
    in about a quarter of the layouts; drawn again whole, as Safety-Gymnasium does, every one fits."""
    keepout = jnp.full(6, 0.4)
    keys = jax.random.split(jax.random.key(0), 64)
    once = jax.jit(jax.vmap(lambda k: sample_layout(k, keepout, 1.3 - keepout, num_candidates=100)))(keys)
    again = jax.jit(jax.vmap(lambda k: sample_fitting_layout(k, keepout, 1.3 - keepout)))(keys)
    fits = jax.vmap(layout_fits, in_axes=(0, None))
    assert float(jnp.mean(fits(once, keepout))) < 0.5 and bool(jnp.all(fits(again, keepout)))
    assert bool(jnp.all(jnp.abs(again) <= 1.3 - 0.4 + 1e-6))


# Level 2 only: its 19 objects in ±1.8 (level 1 draws with the same code). The draw is reset's own
# (Replica.resets), its states forwarded in C.
@pytest.mark.parametrize("replica", [pytest.param(2, marks=pytest.mark.slow)], indirect=True)
def test_resets_draw_fresh_layouts_within_safety_gymnasiums_constraints(replica):
    env = replica.env
    states = replica.resets(jax.random.split(jax.random.key(3), 32))
    suite, task = env.suite, states.info["task"]
    agent = np.asarray(jax.vmap(lambda d: env.body.position(d)[:2])(states.data))
    layout = {**{label: np.asarray(task[label]) for label in suite.objects}, "gremlins": np.asarray(task["gremlin_anchors"])}
    np.testing.assert_allclose(layout["gremlins"], np.asarray(task["gremlins"]), atol=1e-6)  # at rest on their anchors
    buttons, goal = layout["buttons"], layout["goal"]
    np.testing.assert_array_equal(goal[:, 0], buttons[np.arange(32), np.asarray(task["goal_button"])])
    assert len(set(np.asarray(task["goal_button"]).tolist())) > 1 and not np.asarray(task["timer"]).any()
    # The goal's own draw (keepout 0.4) is not kept: it moved onto the goal button. Everything else keeps its keepouts.
    points = np.concatenate([agent[:, None]] + [layout[label] for label in suite.objects if label != "goal"], 1)
    keepout = np.concatenate([[suite.agent_keepout]] + [[p.keepout] * p.count for label, p in suite.objects.items()
                                                         if label != "goal"])
    assert np.all(np.abs(points) <= suite.extent - keepout[None, :, None] + 1e-6)
    gaps = np.linalg.norm(points[:, :, None] - points[:, None], axis=-1) - keepout[:, None] - keepout[None]
    assert np.all(gaps[:, ~np.eye(len(keepout), dtype=bool)] >= -1e-6)
    assert np.all(np.asarray(states.cost) == 0)


@pytest.mark.parametrize("replica", [pytest.param(1, marks=pytest.mark.slow)], indirect=True)
def test_nothing_costs_after_a_fresh_reset_at_rest(replica):
    """20 rest steps from a fresh level-1 draw (its step is compiled for the rollouts; level 2's is not
    compiled at all, :data:`ROLLOUT_LEVELS`): the gremlins circle clear of the agent, nothing touches
    a button, nothing costs."""
    state = trees.take(replica.resets(jax.random.split(jax.random.key(3), 1)), 0)
    for _ in range(20):
        state = replica.step(state, jnp.zeros(2))
        assert float(state.cost) == 0.0 and not any(cost_terms(state).values())


@pytest.mark.slow
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face():
    served = [f"SafetyPointButton{i}-v0" for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[1].name == "SafetyButton" for i in served)
    face = safety_gymnasium.make("SafetyPointButton1-v0")  # built, not compiled
    assert face.unwrapped.env.id == "SafetyPointButton1-v0" and face.observation_space.shape == (76,)
    assert face.observation_space.dtype == np.float64 and face.action_space.dtype == np.float64
    assert safety_gymnasium.make("SafetyPointButton1-v0", paper_variant=True).unwrapped.env.id == "PointButton1"
    assert TaskEnv(SafetyButton(SafetyGymPoint(), 0)).id == "SafetyPointButton0-v0"
    params = crax.parameters("SafetyPointButton2-v0")
    assert params["gremlins"].default == 6 and params["extent"].default == 1.8 and params["buttons_constrained"].default
    assert not crax.parameters("SafetyPointButton0-v0")["buttons_constrained"].default
    with pytest.raises(ValueError, match="SafetyPointButton0-v0, SafetyPointButton1-v0, SafetyPointButton2-v0"):
        crax.make("SafetyPointButton3-v0")
