"""PointButton1 on hand-placed states: pressing the active and a wrong button, the blank period
after a press, gremlin contact at a known phase, gremlins in the hazard lidar, zones.

Compiled programs: the env's ``reset`` and ``step`` and the hand-placement program
(``tests/env/arrange.py``); other levels only through their configuration and ``eval_shape``.
"""

from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.bodies.point import Point
from crax.objects.walls import wall_points
from crax.sensors import pseudo_lidar
from crax.suites.button import Button
from tests.env.arrange import Arranger
from tests.env.conftest import FAR, compiled

BUTTON_LIDAR, HAZARD_LIDAR = slice(12, 28), slice(28, 44)
BUTTON_COMPASS, HAZARD_COMPASS = slice(44, 46), slice(46, 62)
DT, TRAVEL = 0.08, 0.35
BUTTONS = [(0.15, 0.0), (1.0, 1.0), (-1.0, 1.0), (1.0, -1.0)]
"""Button 0 overlaps a Point at the origin (sphere r 0.1 each, centres 0.15 apart)."""


@functools.cache
def env1():
    c = compiled("PointButton1")
    return c, Arranger(c)


def parked_gremlins(count=4):
    anchors = np.asarray([(FAR + 3.0 * i, -FAR) for i in range(count)], np.float32)
    return {"gremlin_anchors": anchors, "gremlins": anchors}


def gremlins_at(anchors, clock):
    phase = clock * DT
    return np.asarray(anchors) + TRAVEL * np.array([math.sin(phase), math.cos(phase)])


def arrange(xy=(0.0, 0.0), yaw=0.0, **kw):
    _, a = env1()
    return a(xy, yaw, **{"buttons": BUTTONS, **parked_gremlins(), **kw})


# ---------------------------------------------------------------------------------------------
# Presses.


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.slow
def test_pressing_the_active_button(seed):
    c, _ = env1()
    state = arrange((0.0, 0.0), 0.3, active=0, seed=seed)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.metrics["reward/button"]) == 1.0 and float(nxt.metrics["buttons_pressed"]) == 1.0
    assert float(nxt.metrics["cost/wrong_button"]) == 0.0 and float(nxt.cost) == 0.0
    assert float(nxt.metrics["cost/contact"]) == 0.0  # buttons are not hazards
    # the reward is the bonus plus the distance progress to the pressed button
    before = np.asarray(c.env.body.position(state.data)[:2])
    after = np.asarray(c.env.body.position(nxt.data)[:2])
    progress = np.linalg.norm(before - BUTTONS[0]) - np.linalg.norm(after - BUTTONS[0])
    assert float(nxt.reward) == pytest.approx(1.0 + progress, abs=1e-5)
    # another button becomes active and the button sensors go blank for the press step
    task = nxt.info["task"]
    assert int(task["active"]) != 0 and int(task["blank"]) == 10
    assert np.all(np.asarray(nxt.obs[BUTTON_LIDAR]) == 0) and np.all(np.asarray(nxt.obs[BUTTON_COMPASS]) == 0)


def test_next_active_button_is_uniform_over_the_others():
    c, _ = env1()
    drawn = [int(c.step(arrange(active=0, seed=s), jnp.zeros(2)).info["task"]["active"]) for s in range(8, 32)]
    assert set(drawn) == {1, 2, 3}


def test_pressing_a_wrong_button_costs():
    c, _ = env1()
    state = arrange((0.0, 0.0), 0.0, active=2)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.metrics["cost/wrong_button"]) == 1.0 and float(nxt.cost) == 1.0
    assert float(nxt.metrics["reward/button"]) == 0.0
    assert int(nxt.info["task"]["active"]) == 2 and int(nxt.info["task"]["blank"]) == 0
    # no contact, no cost; the active button shows in the lidar and compass
    far = c.step(arrange((0.0, -0.5), 0.0, active=2), jnp.zeros(2))
    assert float(far.metrics["cost/wrong_button"]) == 0.0 and float(far.cost) == 0.0
    # the active button 2 at (-1, 1) seen from (0, -0.5) facing +x: ego angle atan2(1.5, -1)
    angle = math.atan2(1.5, -1.0)
    np.testing.assert_allclose(np.asarray(far.obs[BUTTON_COMPASS]), [math.cos(angle), math.sin(angle)], atol=1e-3)
    # the lidar shows the active button only (the other three, nearer to the agent or not, are not seen)
    want = pseudo_lidar(jnp.asarray((0.0, -0.5)), jnp.asarray(0.0), jnp.asarray([BUTTONS[2]]), num_bins=16,
                        max_dist=3.0)
    assert np.asarray(want).max() > 0
    np.testing.assert_allclose(np.asarray(far.obs[BUTTON_LIDAR]), np.asarray(want), atol=1e-5)


@pytest.mark.parametrize(("yaw", "pressed"), [(0.0, True), (0.3, True), (math.pi, False), (math.pi / 2, False)])
def test_the_front_box_presses(yaw, pressed):
    """The Point's front box collides (DECISIONS 41, through a sphere of radius 0.05 inscribed in it):
    facing a button whose centre is 0.23 away, the box (front 0.15 from the centre) presses it; the
    sphere alone (reach 0.1 + 0.1) does not."""
    c, _ = env1()
    buttons = [(0.23, 0.0), *BUTTONS[1:]]
    state = arrange((0.0, 0.0), yaw, active=0, buttons=buttons)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.metrics["buttons_pressed"]) == float(pressed)


@pytest.mark.parametrize("blank", [10, 3, 1])
def test_presses_do_not_count_while_blank(blank):
    c, _ = env1()
    state = arrange((0.0, 0.0), 0.0, active=0, blank=blank)
    assert np.all(np.asarray(state.obs[BUTTON_LIDAR]) == 0) and np.all(np.asarray(state.obs[BUTTON_COMPASS]) == 0)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.metrics["reward/button"]) == 0.0 and int(nxt.info["task"]["active"]) == 0
    assert int(nxt.info["task"]["blank"]) == blank - 1
    # touching a wrong button while blank costs nothing either
    wrong = c.step(arrange((0.0, 0.0), 0.0, active=1, blank=blank), jnp.zeros(2))
    assert float(wrong.metrics["cost/wrong_button"]) == 0.0
    # the sensors come back with the step that brings the count to 0
    visible = blank == 1
    assert (np.asarray(nxt.obs[BUTTON_COMPASS]).any()) == visible


# ---------------------------------------------------------------------------------------------
# Gremlins: anchor + travel (sin phi, cos phi), phi = steps since the episode began x dt.

ANCHOR = (1.0, -0.5)


@pytest.mark.parametrize(("clock", "contact"), [(19, True), (59, False)])
def test_gremlin_contact_at_a_known_phase(clock, contact):
    # Step clock+1 runs with the gremlin at phi = (clock+1) dt: 1.6 rad (sin ~1: at anchor + (0.35, 0))
    # for clock 19, 4.72 rad (at anchor - (0.35, 0)) for clock 59. The agent stands 0.15 to the right
    # of anchor + (0.35, 0): the box (half 0.1) overlaps the sphere (r 0.1) by 0.05 only at phase 1.6.
    c, _ = env1()
    anchors = np.asarray([ANCHOR] + [(FAR + 3.0 * i, -FAR) for i in range(1, 4)], np.float32)
    agent = (ANCHOR[0] + TRAVEL + 0.15, ANCHOR[1])
    state = arrange(agent, 0.0, gremlin_anchors=anchors, gremlins=gremlins_at(anchors, clock), clock=clock)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.metrics["cost/contact"]) == (3.0 if contact else 0.0)
    assert float(nxt.cost) == (3.0 if contact else 0.0)
    # the task now holds the gremlins at phi = (clock + 1) dt
    task = nxt.info["task"]
    assert int(task["clock"]) == clock + 1
    np.testing.assert_allclose(np.asarray(task["gremlins"]), gremlins_at(anchors, clock + 1), atol=1e-5)


def test_gremlins_move_and_the_hazard_lidar_sees_them_where_they_are():
    c, _ = env1()
    anchors = np.asarray([(0.0, 1.0), (-1.0, -1.0), (FAR, -FAR), (FAR + 3, -FAR)], np.float32)
    state = arrange((0.2, -0.5), 0.5, gremlin_anchors=anchors, gremlins=gremlins_at(anchors, 0), clock=0)
    positions = []
    for k in range(1, 4):
        state = c.step(state, jnp.zeros(2))
        task = state.info["task"]
        np.testing.assert_allclose(np.asarray(task["gremlins"]), gremlins_at(anchors, k), atol=1e-5)
        positions.append(np.asarray(task["gremlins"][0]))
        xy = np.asarray(state.data.qpos[:2])
        np.testing.assert_allclose(xy, (0.2, -0.5), atol=1e-6)  # it stands still
        seen = np.concatenate([np.asarray(task["cylinder_zones"]), np.asarray(task["gremlins"]),
                               np.asarray(wall_points(jnp.asarray(xy), 3.0))])
        want = pseudo_lidar(jnp.asarray(xy), jnp.asarray(0.5), jnp.asarray(seen), num_bins=16, max_dist=3.0)
        np.testing.assert_allclose(np.asarray(state.obs[HAZARD_LIDAR]), np.asarray(want), atol=1e-5)
        # the gremlin's mocap body is already where the next physics step has it
        mocap = np.asarray(state.data.mocap_pos[c.env.suite.gremlins.mocap_ids[0], :2])
        np.testing.assert_allclose(mocap, gremlins_at(anchors, k + 1)[0], atol=1e-5)
    # it moves 0.35 * 0.08 per step along its circle
    assert np.linalg.norm(positions[1] - positions[0]) == pytest.approx(TRAVEL * 2 * math.sin(DT / 2), rel=1e-3)


# ---------------------------------------------------------------------------------------------
# Hazard zones (r 0.2, cost_scale 2) do not collide.


def test_hazard_zones_cost_by_proximity_and_do_not_block():
    c, _ = env1()
    state = arrange((0.5, -1.0), 0.0, cylinder_zones=[(0.55, -1.0)], qvel=(0.5, 0.0, 0.0))
    assert float(state.metrics["cost/cylinder_zones"]) == pytest.approx(2.0 * (1 - 0.05 / 0.2), rel=1e-5)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.data.qpos[0]) > 0.52  # it moved on through the zone
    assert float(nxt.metrics["cost/contact"]) == 0.0


# ---------------------------------------------------------------------------------------------
# Levels.


@pytest.mark.slow
def test_levels():
    for level, (zones, gremlins) in {1: (4, 4), 2: (8, 6), 3: (12, 8)}.items():
        suite, d = Button(Point(), level), Button.defaults(level)  # the declared defaults (crax.suites.button)
        assert suite.hazards["cylinder_zones"].count == zones and suite.hazards["cylinder_zones"].radius == d["hazard_radius"]
        assert suite.gremlins.count == gremlins and suite.gremlins.travel == d["gremlin_travel"]
        assert suite.extent == d["extent"] and suite.wall_extent == d["wall_extent"]
        assert suite.props["buttons"].count == d["button_count"] and suite.props["buttons"].radius == d["button_radius"]
    shape = crax.make("PointButton3").state_shapes
    assert shape.obs.shape == (62,)
    assert {k for k in shape.metrics if k.startswith(("reward/", "cost/"))} == {
        "reward/distance", "reward/button", "cost/cylinder_zones", "cost/contact", "cost/wrong_button"
    }
    with pytest.raises(ValueError, match="button_count"):
        Button(Point(), 1, button_count=1)
