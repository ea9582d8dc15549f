"""PointGoal3 with ``lidar="natural"`` on hand-placed states, through the real scene and physics.

Every test here runs the one compiled ``arrange`` program (``mjx.forward`` of a hand-placed state,
then the env's own observation and cost terms): contact costs with pillars and walls, zone costs,
the ray-cast lidar against hand geometry, and the Point's observation against MuJoCo's sensors.
"""

from __future__ import annotations

import copy
import functools
import math

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from crax.core.context import Context
from crax.core.scene import GROUP_GOAL
from crax.sensors.lidar import NaturalLidar

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

W = 2 * math.pi / 16
D = 3.0
GOAL_LIDAR, HAZARD_LIDAR = slice(12, 28), slice(28, 44)
GOAL_COMPASS, HAZARD_COMPASS = slice(44, 46), slice(46, 62)


def costs(state):
    return {k: float(v) for k, v in state.metrics.items() if k.startswith("cost/")}


# ---------------------------------------------------------------------------------------------
# Contact with collidable hazards and walls (collision_cost = 3 per touched geom).


PI = math.pi


@pytest.mark.parametrize(
    ("agent", "yaw", "placed", "contact"),
    [
        # Point sphere r 0.1; cylinder pillar r 0.25: centres 0.3 apart overlap by 0.05, 0.4 apart do not
        # (facing away, so that the front box, x 0.05..0.15 and y +-0.05 ahead, points elsewhere)
        ((0.0, 0.0), 0.3, {"cylinder_pillars": [(0.3, 0.0)]}, 3.0),
        ((0.0, 0.0), 0.3, {"cylinder_pillars": [(0.0, -0.34)]}, 3.0),
        ((0.0, 0.0), PI, {"cylinder_pillars": [(0.4, 0.0)]}, 0.0),
        ((1.0, 1.0), PI, {"cylinder_pillars": [(1.25, 1.25)]}, 0.0),  # 0.354 apart: a gap of 0.004
        # cube pillar half 0.25: face 0.05 inside the sphere / 0.05 clear of it
        ((0.0, 0.0), 0.3, {"cube_pillars": [(0.3, 0.0)]}, 3.0),
        ((0.0, 0.0), 0.0, {"cube_pillars": [(0.0, 0.4)]}, 0.0),
        ((0.0, 0.0), 0.3, {"cube_pillars": [(0.3, 0.3)]}, 3.0),  # corner (0.05, 0.05) inside the sphere
        # each touched hazard pays once: two pillars at once cost 6
        ((0.0, 0.0), 0.3, {"cube_pillars": [(0.3, 0.0)], "cylinder_pillars": [(-0.3, 0.0)]}, 6.0),
        ((0.0, 0.0), 0.3, {"cylinder_pillars": [(0.3, 0.0), (-0.3, 0.0), (0.0, 0.3)]}, 9.0),
        # the front box collides too (DECISIONS 41): its face 0.15 ahead, 0.02 inside a pillar 0.38 away
        ((0.0, 0.0), 0.0, {"cylinder_pillars": [(0.38, 0.0)]}, 3.0),
        ((0.0, 0.0), PI, {"cylinder_pillars": [(0.38, 0.0)]}, 0.0),
        # walls at +-3
        ((2.95, 0.0), 0.3, {}, 3.0),
        ((0.0, -2.93), 0.3, {}, 3.0),
        ((2.85, 0.0), PI, {}, 0.0),
        ((2.87, 0.0), 0.0, {}, 3.0),  # the box's face at 3.02
        ((2.87, 0.0), PI, {}, 0.0),  # the sphere 0.03 short of the wall
        ((-2.95, 2.95), 0.3, {}, 6.0),  # a corner touches two walls
    ],
)
@pytest.mark.slow
def test_contact_cost_through_physics(point_goal3, agent, yaw, placed, contact):
    state = point_goal3.arrange(agent, yaw, **placed)
    c = costs(state)
    assert c["cost/contact"] == contact
    assert c["cost/cube_zones"] == 0.0 and c["cost/cylinder_zones"] == 0.0
    assert float(state.cost) == contact


def test_contact_needs_the_agent(point_goal3):
    # Two pillars overlapping each other (but not the agent) cost nothing: only agent contacts count.
    state = point_goal3.arrange((-2.0, -2.0), 0.0, cylinder_pillars=[(1.0, 1.0)], cube_pillars=[(1.2, 1.0)])
    assert costs(state)["cost/contact"] == 0.0


# ---------------------------------------------------------------------------------------------
# Zone costs through the env (level 3: cylinder zones r 0.35, cube zones half 0.3; cost_scale 2).


def test_zone_costs_through_env(point_goal3):
    s = point_goal3.arrange((0.5, -0.5), 1.0, cylinder_zones=[(0.6, -0.5)])
    assert costs(s)["cost/cylinder_zones"] == pytest.approx(2.0 * (1 - 0.1 / 0.35), rel=1e-5)
    assert costs(s)["cost/contact"] == 0.0  # zones do not collide
    s = point_goal3.arrange((0.5, -0.5), 1.0, cylinder_zones=[(0.6, -0.5), (0.5, -0.3)])
    assert costs(s)["cost/cylinder_zones"] == pytest.approx(2.0 * ((1 - 0.1 / 0.35) + (1 - 0.2 / 0.35)), rel=1e-5)
    s = point_goal3.arrange((0.5, -0.5), 1.0, cube_zones=[(0.75, -0.79)])
    assert costs(s)["cost/cube_zones"] == 2.0
    s = point_goal3.arrange((0.5, -0.5), 1.0, cube_zones=[(0.81, -0.5)])
    assert costs(s)["cost/cube_zones"] == 0.0
    s = point_goal3.arrange((0.5, -0.5), 1.0, cube_zones=[(0.5, -0.5)], cylinder_zones=[(0.5, -0.5)])
    assert costs(s) == {"cost/contact": 0.0, "cost/cube_zones": 2.0, "cost/cylinder_zones": 2.0}
    assert float(s.cost) == 4.0


# ---------------------------------------------------------------------------------------------
# Natural lidar (mjx.ray): one ray per bin at the bin's centre angle; reading 1 - hit distance / 3.


def test_natural_lidar_against_hand_geometry(point_goal3):
    # Facing yaw = -W/2, bin b's ray points along world angle b*W: bin 0 along +x, bin 4 along +y,
    # bin 8 along -x, bin 12 along -y.
    s = point_goal3.arrange(
        (0.0, 0.0), -W / 2,
        cube_pillars=[(1.0, 0.0)],  # face at x = 0.75
        goal=[(0.0, 1.5)],  # goal disc r 0.16: edge at 1.34
        cube_zones=[(-1.5, 0.0)],  # flat square half 0.3: edge at 1.2
        cylinder_pillars=[(0.0, -2.0)],  # r 0.25: surface at 1.75
    )
    obs = np.asarray(s.obs)
    hazards = np.zeros(16)
    hazards[0], hazards[8], hazards[12] = 1 - 0.75 / D, 1 - 1.2 / D, 1 - 1.75 / D
    np.testing.assert_allclose(obs[HAZARD_LIDAR], hazards, atol=1e-4)
    goal = np.zeros(16)
    goal[4] = 1 - 1.34 / D
    np.testing.assert_allclose(obs[GOAL_LIDAR], goal, atol=1e-4)


def wall_reading(xy, theta, extent=3.0):
    """Natural-lidar reading of the walls at +-extent along world angle theta from xy."""
    c, s = math.cos(theta), math.sin(theta)
    hits = [(b - xy[0]) / c for b in (-extent, extent) if abs(c) > 1e-9] + [
        (b - xy[1]) / s for b in (-extent, extent) if abs(s) > 1e-9
    ]
    t = min(h for h in hits if h > 0)
    return max(0.0, D - t) / D


def walls_only(xy, yaw):
    return np.array([wall_reading(xy, yaw + (b + 0.5) * W) for b in range(16)])


def test_natural_lidar_rays_leave_the_bin_centres(point_goal3):
    # Facing +x, a cube pillar straight ahead sits between bins 0 and 15: both rays (at +-W/2) hit
    # its face x = 0.75 at distance 0.75 / cos(W/2). The walls fill the bins whose rays reach them
    # within range (bins 3, 4: the north wall; bins 6-9: the west wall).
    s = point_goal3.arrange((-1.0, 0.5), 0.0, cube_pillars=[(0.0, 0.5)])
    lid = np.asarray(s.obs[HAZARD_LIDAR])
    r = 1 - 0.75 / math.cos(W / 2) / D
    want = walls_only((-1.0, 0.5), 0.0)
    assert np.count_nonzero(want) == 6 and want[0] == want[15] == 0.0
    want[0] = want[15] = r
    np.testing.assert_allclose(lid, want, atol=1e-4)
    # Turned by a quarter turn the same pillar is seen by bins 11 and 12 (clockwise of the heading).
    s = point_goal3.arrange((-1.0, 0.5), math.pi / 2, cube_pillars=[(0.0, 0.5)])
    want = walls_only((-1.0, 0.5), math.pi / 2)
    want[11] = want[12] = r
    np.testing.assert_allclose(np.asarray(s.obs[HAZARD_LIDAR]), want, atol=1e-4)


def test_natural_lidar_range_and_walls(point_goal3):
    # Beyond max_dist nothing is seen; the walls are (the hazard lidar casts against them too), at
    # any point of their length: here bin 8 hits the west wall 0.5 away and bins 5-11 the west wall
    # off its centre; bins 4 and 12 meet the north and south walls just at the range, 3 away.
    s = point_goal3.arrange((-2.5, 0.0), -W / 2, cylinder_pillars=[(0.8, 0.0)])  # surface at 3.05
    want = walls_only((-2.5, 0.0), -W / 2)
    assert want[8] == pytest.approx(1 - 0.5 / D) and want[0] == 0.0
    assert np.count_nonzero(want) == 7  # bins 5..11
    np.testing.assert_allclose(np.asarray(s.obs[HAZARD_LIDAR]), want, atol=1e-4)
    assert np.all(np.asarray(s.obs[GOAL_LIDAR]) == 0.0)  # walls are not goals
    # In a corner two walls are close: both show, each reading its own distance.
    s = point_goal3.arrange((2.7, 2.6), 0.3)
    want = walls_only((2.7, 2.6), 0.3)
    np.testing.assert_allclose(np.asarray(s.obs[HAZARD_LIDAR]), want, atol=1e-4)
    assert want.min() == 0.0 and want.max() > 0.8


@functools.cache
def step_fn():
    from tests.env.conftest import POINT_GOAL3, compiled

    return compiled("PointGoal3", **POINT_GOAL3).step


@pytest.mark.slow
def test_natural_goal_lidar_sees_a_respawned_goal_in_the_same_step(point_goal3):
    # The agent stands on the goal (r 0.16): the step respawns it, and the observation of that step
    # already ray-casts against the goal's new position (mjx.ray reads geom_xpos, which the suite
    # writes with the mocap position), not against the old one under the agent.
    state = point_goal3.arrange((0.0, 0.0), 0.4, goal=[(0.05, 0.0)])
    nxt = step_fn()(state, np.zeros(2, np.float32))
    assert float(nxt.metrics["reward/goal"]) == 1.0
    goal = np.asarray(nxt.info["task"]["goal"][0], np.float64)
    agent = np.asarray(nxt.data.qpos[:2], np.float64)
    assert np.linalg.norm(goal - agent) > 0.5
    angles = 0.4 + (np.arange(16) + 0.5) * W
    dirs = np.stack([np.cos(angles), np.sin(angles)], -1)
    p = agent - goal
    b = dirs @ p
    disc = b**2 - (p @ p - 0.16**2)
    t = np.where(disc >= 0, -b - np.sqrt(np.maximum(disc, 0)), np.inf)
    want = np.where((disc >= 0) & (t > 0), np.maximum(0.0, D - t) / D, 0.0)
    np.testing.assert_allclose(np.asarray(nxt.obs[GOAL_LIDAR]), want, atol=1e-4)
    np.testing.assert_allclose(np.asarray(nxt.data.geom_xpos[point_goal3.env.suite.props["goal"].geom_ids[0]][:2]),
                               goal, atol=1e-6)


def test_a_step_names_contacts_by_the_scene_geom_ids(point_goal3):
    """The physics model leaves the zones and the goal out and numbers its geoms its own way; a stepped
    state's contacts carry the scene model's geom ids, which the contact cost reads."""
    env = point_goal3.env
    assert not np.array_equal(env.physics_model.kept("geom"), np.arange(env.physics_model.mj_model.ngeom))
    state = point_goal3.arrange((0.0, 0.0), 0.0, cylinder_pillars=[(0.3, 0.0)])
    nxt = step_fn()(state, np.asarray([1.0, 0.0], np.float32))  # driving its front box into the pillar
    assert costs(nxt)["cost/contact"] == 3.0
    contact = nxt.data._impl.contact
    touching = np.asarray(contact.geom)[np.asarray(contact.dist) < 0]
    names = {frozenset(env.mj_model.geom(int(g)).name for g in pair) for pair in touching}
    assert frozenset({"agent/arrow_collision", "cylinder_pillars/0/collision"}) in names


def test_natural_lidar_visible_geoms(point_goal3):
    # A per-geom visibility table (Button's lidar sees only the active button): rays whose first hit
    # is a geom marked invisible read 0. Here the goal (r 0.16, group 3) straight ahead at 1.0.
    env = point_goal3.env
    s = point_goal3.arrange((0.0, 0.0), -W / 2, goal=[(1.0, 0.0)])
    lidar = NaturalLidar(GROUP_GOAL, visible="visible")
    lidar.bind(env.mj_model)
    goal_geoms = np.zeros(env.mj_model.ngeom, bool)
    goal_geoms[list(env.suite.props["goal"].all_geom_ids)] = True

    @jax.jit
    def observe(visible):
        ctx = Context(model=env.mjx_model, data=s.data, agent_xy=jnp.zeros(2), agent_yaw=jnp.asarray(-W / 2),
                      task={"visible": visible})
        return lidar.observe(ctx)

    seen = np.asarray(observe(jnp.asarray(goal_geoms)))
    want = np.zeros(16)
    want[0] = 1 - 0.84 / D
    np.testing.assert_allclose(seen, want, atol=1e-4)
    np.testing.assert_allclose(seen, np.asarray(s.obs[GOAL_LIDAR]), atol=1e-6)
    assert np.all(np.asarray(observe(jnp.zeros(env.mj_model.ngeom, bool))) == 0.0)


# ---------------------------------------------------------------------------------------------
# Compasses in the observation.


def test_goal_and_hazard_compasses_in_observation(point_goal3):
    yaw = 0.6
    s = point_goal3.arrange(
        (0.2, -0.4), yaw, goal=[(1.2, 0.6)],
        cube_zones=[(0.2, 1.6)], cylinder_pillars=[(-1.3, -0.4)], cylinder_zones=[(0.2, -0.9)],
    )
    obs = np.asarray(s.obs)
    c, s_ = math.cos(yaw), math.sin(yaw)

    def ego_unit(p):
        rel = np.asarray(p) - np.array([0.2, -0.4])
        e = np.array([c * rel[0] + s_ * rel[1], -s_ * rel[0] + c * rel[1]])
        return e / np.linalg.norm(e)

    np.testing.assert_allclose(obs[GOAL_COMPASS], ego_unit((1.2, 0.6)), atol=1e-5)
    hazards = obs[HAZARD_COMPASS].reshape(8, 2)
    # the three placed hazards (distances 0.5, 1.5, 2.0) first, then the walls' points nearest to the
    # agent (south 2.6, east 2.8, west 3.2, north 3.4), then the parked hazards far away
    nearest = [(0.2, -0.9), (-1.3, -0.4), (0.2, 1.6), (0.2, -3.0), (3.0, -0.4), (-3.0, -0.4), (0.2, 3.0)]
    for i, p in enumerate(nearest):
        np.testing.assert_allclose(hazards[i], ego_unit(p), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(hazards, axis=1), 1.0, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# The Point's observation in the scene against MuJoCo's own sensors (CPU, sensor stage on).


@pytest.mark.parametrize(
    ("agent", "yaw", "qvel", "ctrl"),
    [((0.5, -1.0), 2.2, (0.3, -0.7, 0.9), (0.6, -0.4)), ((-2.0, 1.0), -0.5, (-1.0, 0.2, -2.0), (-1.0, 1.0))],
)
def test_point_body_observation_matches_mujoco_sensors(point_goal3, agent, yaw, qvel, ctrl):
    env = point_goal3.env
    s = point_goal3.arrange(agent, yaw, qvel=qvel, ctrl=ctrl)
    m = copy.deepcopy(env.mj_model)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    d = mujoco.MjData(m)
    d.qpos[:] = np.asarray(s.data.qpos)
    d.qvel[:] = np.asarray(s.data.qvel)
    d.ctrl[:] = np.asarray(s.data.ctrl)
    d.mocap_pos[:] = np.asarray(s.data.mocap_pos)
    mujoco.mj_forward(m, d)
    want = np.concatenate([d.sensor(f"agent/{n}").data for n in ("accelerometer", "velocimeter", "gyro", "magnetometer")])
    np.testing.assert_allclose(np.asarray(s.obs[:12]), want, rtol=1e-4, atol=1e-4)
    # sanity of the hand placement itself
    np.testing.assert_allclose(np.asarray(s.data.qpos[:3]), [*agent, yaw], atol=1e-6)
    np.testing.assert_allclose(float(env.body.yaw(s.data)), yaw, atol=1e-5)
    np.testing.assert_allclose(np.asarray(env.body.position(s.data)), [*agent, 0.1], atol=1e-6)
