"""Safety-Gymnasium's Button 0-2 on the Point, the Car and the Ant, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself; docs/safety_gymnasium.md lists the tolerances (here and in
:mod:`tests.env.safety_gym_agents`) and the measured errors. One env per id (module-scoped): every
level is placed in its recorded states (forwarded by MuJoCo in C; the Ant's by MJX, see
:data:`PRESSED`); each agent's step is compiled at level 0 (presses, the long rollout, the
Ant's death), the Point's at level 1 too, whose gremlins and constrained buttons it steps
(docs/safety_gymnasium/checking.md). Only the Car's level-0 spaces are in the default tier.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.objects.placement import layout_fits, sample_fitting_layout, sample_layout
from crax.suites.safety_gym import SafetyButton
from tests import trees
from tests.env import safety_gym_fidelity as fidelity
from tests.env.safety_gym_agents import ANT, CAR, CAR_CONTACT_ATOL, POINT, WALKS, agent_of, every_level, ids, navigators
from tests.env.safety_gym_reference import ButtonReplica, case, lidar_slices
from tests.env.safety_gym_tracks import Track, assert_track

PRESSED = {
    "Point": fidelity.Pressed("^gremlin_at_front_box$", {"accelerometer": None}, uncounted=("gremlins",)),
    "Car": fidelity.Pressed("^gremlin_against_(bumper|wheel)$", {"accelerometer": CAR_CONTACT_ATOL},
                            uncounted=("gremlins",)),
    "Ant": fidelity.Pressed("touching|against", {"accelerometer": fidelity.Norm(1e-4)}),
}
"""Recorded states where something presses into the agent. A gremlin (a box) pressed into the
Point's front box, the Car's bumper or a wheel's face: MJX and MuJoCo's versions find other contact
points and depths for a box–box pair (the Point's: MJX 4 points at 0.031 m against MuJoCo 2.3.3's 2
at 0.014 m; MuJoCo 4.0 in C, which forwards the placed states, 2 points, its accelerometer 0.26 off;
the Car's wheel: 4 points in MuJoCo 4.0 against 1 on 2.3.3's cylinder), so the raw
``cost/gremlins`` (one per contact point) may differ while its indicator agrees; the Point's
accelerometer (the contact's push) is not compared, the Car's to
:data:`~tests.env.safety_gym_agents.CAR_CONTACT_ATOL`. Buttons or gremlins pressed 3 mm into the
Ant's feet: its accelerometer relative to its norm (measured ≤ 3.5e-5: 2.6e-4 m/s² where two buttons
press, 3.4e-4 where two gremlins do; the other sensors as everywhere). The Ant's states are placed
with MJX's forward pass, not MuJoCo's in C as elsewhere: MuJoCo 4.0 in C, on the same contacts,
solves the button pressing into a foot to another acceleration (``touching_goal_button``: 6.4e-2 of
the norm off)."""
COUNTED = {"Point": ("buttons", "gremlins"), "Car": ("buttons", "gremlins"), "Ant": ("buttons",)}
"""Cost terms whose raw count (contact points) is compared on the recorded states (the Ant's
gremlins by their indicator only)."""

PRESS_REWARD_ATOL = {"Point": 1e-4, "Car": 1e-4, "Ant": 3e-2}
"""Reward per step along the press rollouts (the Car's measured ≤ 2.2e-6). The Ant's: in its reset
pose 0.28 m up it flies at 2 m/s into button 0, a foot 1 cm deep in it after the second step. The
strike is a knife edge: Safety-Gymnasium itself from that state moved by 1e-7 m ends the strike
3.4e-3 m and the step after 1.6e-2 m off (MuJoCo 4.0 in C on its scene: the same), and so does crax
(torso 3.4e-3 m, then 1.6e-2 m); a step's reward differences two of these (measured ≤ 1.9e-2, the
step after the strike at level 2). Whether it presses, the timer and every cost indicator agree
exactly; the raw count of contact points need not (level 2's wrong button: 2 in Safety-Gymnasium,
where a second geom of the leg touches it too, 1 in crax)."""
PRESS_LIDAR_ATOL = {"Point": 1e-3, "Car": 1e-3, "Ant": 0.1}
"""Lidar bins along the press rollouts (buttons, goal; the agent pushes against a button; the Car's
measured ≤ 2.2e-5; the Ant's torso 1.6e-2 m off after the strike, as above: ≤ 7.4e-2)."""
PRESS_TRACKS = {"Car": Track({"xy": {None: 1e-4}})}
"""The Car's drives into a button (30 and 20 steps, pressed on step 11, then pushing against it):
the chassis' position (m) at every step (measured ≤ 6.0e-6 m)."""
DEATH_ATOL = 1e-4
"""Reward of the step in which the Ant, on its back, dies (measured 0)."""

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


@pytest.fixture(scope="module")
def replica(request) -> ButtonReplica:
    return ButtonReplica(request.param, engine="mjx" if agent_of(request.param) is ANT else "c")  # see PRESSED


@pytest.mark.parametrize("replica", every_level("Button", CAR), indirect=True)
def test_spaces_timing_keys_and_physics_are_safety_gymnasiums(replica):
    fidelity.assert_navigation_arena(replica)


@pytest.mark.parametrize("replica", every_level("Button"), indirect=True)
def test_observations_and_costs_on_recorded_states(replica):
    name = agent_of(replica.env_id).name
    names = {c["name"] for c, _ in fidelity.assert_states(replica, PRESSED[name], counted=COUNTED[name], timed=True)}
    assert {"touching_goal_button", "touching_wrong_button", "touching_two_wrong_buttons"} <= names


# Each agent presses at level 0; the Point at level 1 too (its buttons constrained, its gremlins
# about). Levels 1 and 2 differ in their counts, which their recorded states check.
@pytest.mark.slow
@pytest.mark.parametrize("replica", [POINT.id("Button", 0), POINT.id("Button", 1), CAR.id("Button", 0),
                                     ANT.id("Button", 0)], indirect=True)
@pytest.mark.parametrize("name", ["press_goal_button", "press_wrong_button"])
def test_presses_timer_rewards_and_costs_on_recorded_rollouts(replica, name):
    agent = agent_of(replica.env_id)
    c = case(replica.record, "rollouts", name)
    out, steps = replica.rollout(c), c["steps"]
    met = np.asarray([s["goal_met"] for s in steps], np.float32)
    assert met.any() == (name == "press_goal_button")
    assert len(out["reward"]) == len(steps) and not out["done"].any()
    np.testing.assert_array_equal(out["metrics"]["goals_reached"], met)
    np.testing.assert_allclose(out["reward"], [s["reward"] for s in steps], atol=PRESS_REWARD_ATOL[agent.name])
    np.testing.assert_array_equal(out["timer"], [s["timer"] for s in steps])
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])
    lidars = lidar_slices(replica.record)
    for i, s in enumerate(steps):
        for key, v in out["metrics"].items():  # each term's indicator, as Safety-Gymnasium's info reports it
            if key.startswith("cost/"):
                assert float(v[i] > 0) == s["cost_info"].get(key.replace("/", "_"), 0.0), (name, i, key)
        for key, part in lidars.items():
            if key == "goal_lidar" and s["goal_met"] and out["own_goal_button"][i] != s["goal_button"]:
                continue  # crax drew another goal button on this press (synchronised from the next step)
            error = np.abs(out["obs"][i][part] - np.asarray(s["obs"])[part]).max()
            assert error < PRESS_LIDAR_ATOL[agent.name], (name, i, key, error)
    blank = [not np.any(out["obs"][i][lidars["buttons_lidar"]]) for i in range(len(steps))]
    press = int(np.argmax(met)) if met.any() else len(steps)
    assert blank == [press <= i < press + 10 for i in range(len(steps))]  # unseen from a press until the timer runs out
    if agent.name in PRESS_TRACKS:
        assert_track(out, steps, PRESS_TRACKS[agent.name], agent.body)
    if agent is ANT:  # flying at button 0, it strikes on the second step; a wrong button's strike costs at levels 1-2
        assert len(steps) == 14 and list(met.nonzero()[0]) == ([1] if name == "press_goal_button" else [])
        assert met.any() or (out["cost"][1] == 1.0) == replica.env.suite.buttons_constrained


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Button", ANT, 0), indirect=True)
def test_the_ant_dies_on_its_back_as_recorded(replica):
    fidelity.assert_dies_on_its_back(replica, DEATH_ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("replica", [*ids("Button", POINT, 0), *ids("Button", CAR, 0), *ids("Button", ANT, 0)],
                         indirect=True)
def test_walking_among_the_buttons_stays_as_close_as_on_goal(replica):
    """Goal's long rollouts and bounds (:data:`~tests.env.safety_gym_agents.WALKS`), the buttons seen all
    along, none pressed; the dynamics do not depend on the level."""
    out = fidelity.assert_rollout(replica, "dynamics", WALKS[agent_of(replica.env_id).name])
    assert not any(s["goal_met"] for s in case(replica.record, "rollouts", "dynamics")["steps"])
    assert not out["metrics"]["goals_reached"].any()


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Button", POINT, 1), indirect=True)
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


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Button", POINT, 1), indirect=True)
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


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Button", POINT, 1), indirect=True)
def test_the_gremlins_mocaps_follow_the_clock_at_every_substep(replica):
    """After a step the mocaps sit where the last substep's hook put them, from that substep's
    start time (not the step's start or end): the hook ran before each ``mjx.step``."""
    c = case(replica.record, "rollouts", "gremlins_circle")
    state = replica.step(replica.arrange(c), jnp.zeros(2))
    gremlins = replica.env.suite.gremlins
    t_last = float(state.data.time) - replica.env.mj_model.opt.timestep
    anchors = np.asarray(state.info["task"]["gremlin_anchors"])
    want = anchors + gremlins.travel * np.array([np.sin(t_last), np.cos(t_last)])
    got = np.asarray(state.data.mocap_pos)[list(gremlins.mocap_ids)]
    np.testing.assert_allclose(got[:, :2], want, atol=1e-6)
    np.testing.assert_allclose(got[:, 2], gremlins.size, atol=1e-7)


@pytest.mark.slow
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
@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Button", POINT, 2), indirect=True)
def test_resets_draw_fresh_layouts_within_safety_gymnasiums_constraints(replica):
    env = replica.env
    states = replica.resets(jax.random.split(jax.random.key(3), 32))
    suite, task = env.suite, states.info["task"]
    agent = np.asarray(jax.vmap(lambda d: env.body.position(d)[:2])(states.data))
    layout = {**{label: np.asarray(task[label]) for label in suite.objects},
              "gremlins": np.asarray(task["gremlin_anchors"])}
    np.testing.assert_allclose(layout["gremlins"], np.asarray(task["gremlins"]), atol=1e-6)  # at rest on their anchors
    buttons, goal = layout["buttons"], layout["goal"]
    np.testing.assert_array_equal(goal[:, 0], buttons[np.arange(32), np.asarray(task["goal_button"])])
    assert len(set(np.asarray(task["goal_button"]).tolist())) > 1 and not np.asarray(task["timer"]).any()
    # The goal's own draw (keepout 0.4) is not kept: it moved onto the goal button. Everything else keeps its keepouts.
    others = {label: p for label, p in suite.objects.items() if label != "goal"}
    points = np.concatenate([agent[:, None]] + [layout[label] for label in others], 1)
    keepout = np.concatenate([[suite.agent_keepout]] + [[p.keepout] * p.count for p in others.values()])
    fidelity.assert_layouts_fit(suite, points, keepout)
    assert np.all(np.asarray(states.cost) == 0)


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Button", POINT, 1), indirect=True)
def test_nothing_costs_after_a_fresh_reset_at_rest(replica):
    """20 rest steps from a fresh level-1 draw (its step is compiled for the rollouts; level 2's is not
    compiled at all): the gremlins circle clear of the agent, nothing touches a button, nothing costs."""
    fidelity.assert_rests_without_cost(replica, trees.take(replica.resets(jax.random.split(jax.random.key(3), 1)), 0))


@pytest.mark.parametrize("agent", navigators())
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face(agent):
    fidelity.assert_served("Button", agent, SafetyButton)
    params = crax.parameters(agent.id("Button", 2))
    assert params["gremlins"].default == 6 and params["extent"].default == 1.8 and params["buttons_constrained"].default
    assert not crax.parameters(agent.id("Button", 0))["buttons_constrained"].default
