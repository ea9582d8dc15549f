"""PointGoal3 with ``lidar="natural"`` on hand-placed states, through the real scene and physics.

Every test here runs the one compiled ``arrange`` program (``mjx.forward`` of a hand-placed state,
then the env's own observation and cost terms): contact costs with pillars and walls, zone costs,
the ray-cast lidar against hand geometry, and the Point's observation against MuJoCo's sensors.
"""

from __future__ import annotations

import copy
import math

import mujoco
import numpy as np
import pytest

W = 2 * math.pi / 16
D = 3.0
GOAL_LIDAR, HAZARD_LIDAR = slice(12, 28), slice(28, 44)
GOAL_COMPASS, HAZARD_COMPASS = slice(44, 46), slice(46, 62)


def costs(state):
    return {k: float(v) for k, v in state.metrics.items() if k.startswith("cost/")}


# ---------------------------------------------------------------------------------------------
# Contact with collidable hazards and walls (collision_cost = 3 per touched geom).


@pytest.mark.parametrize(
    ("agent", "placed", "contact"),
    [
        # Point sphere r 0.1; cylinder pillar r 0.25: centres 0.3 apart overlap by 0.05, 0.4 apart do not
        ((0.0, 0.0), {"cylinder_pillars": [(0.3, 0.0)]}, 3.0),
        ((0.0, 0.0), {"cylinder_pillars": [(0.0, -0.34)]}, 3.0),
        ((0.0, 0.0), {"cylinder_pillars": [(0.4, 0.0)]}, 0.0),
        ((1.0, 1.0), {"cylinder_pillars": [(1.25, 1.25)]}, 0.0),  # 0.354 apart: a gap of 0.004
        # cube pillar half 0.25: face 0.05 inside the sphere / 0.05 clear of it
        ((0.0, 0.0), {"cube_pillars": [(0.3, 0.0)]}, 3.0),
        ((0.0, 0.0), {"cube_pillars": [(0.0, 0.4)]}, 0.0),
        ((0.0, 0.0), {"cube_pillars": [(0.3, 0.3)]}, 3.0),  # corner (0.05, 0.05) inside the sphere
        # each touched hazard pays once: two pillars at once cost 6
        ((0.0, 0.0), {"cube_pillars": [(0.3, 0.0)], "cylinder_pillars": [(-0.3, 0.0)]}, 6.0),
        ((0.0, 0.0), {"cylinder_pillars": [(0.3, 0.0), (-0.3, 0.0), (0.0, 0.3)]}, 9.0),
        # walls at +-3
        ((2.95, 0.0), {}, 3.0),
        ((0.0, -2.93), {}, 3.0),
        ((2.85, 0.0), {}, 0.0),
        ((-2.95, 2.95), {}, 6.0),  # a corner touches two walls
    ],
)
def test_contact_cost_through_physics(point_goal3, agent, placed, contact):
    state = point_goal3.arrange(agent, 0.3, **placed)
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


def test_natural_lidar_rays_leave_the_bin_centres(point_goal3):
    # Facing +x, a cube pillar straight ahead sits between bins 0 and 15: both rays (at +-W/2) hit
    # its face x = 0.75 at distance 0.75 / cos(W/2).
    s = point_goal3.arrange((-1.0, 0.5), 0.0, cube_pillars=[(0.0, 0.5)])
    lid = np.asarray(s.obs[HAZARD_LIDAR])
    r = 1 - 0.75 / math.cos(W / 2) / D
    want = np.zeros(16)
    want[0] = want[15] = r
    np.testing.assert_allclose(lid, want, atol=1e-4)
    # Turned by a quarter turn the same pillar is seen by bins 11 and 12 (clockwise of the heading).
    s = point_goal3.arrange((-1.0, 0.5), math.pi / 2, cube_pillars=[(0.0, 0.5)])
    want = np.zeros(16)
    want[11] = want[12] = r
    np.testing.assert_allclose(np.asarray(s.obs[HAZARD_LIDAR]), want, atol=1e-4)


def test_natural_lidar_range_and_walls(point_goal3):
    # Beyond max_dist nothing is seen, and the walls (group 4) are not in the hazard lidar.
    s = point_goal3.arrange((-2.5, 0.0), -W / 2, cylinder_pillars=[(0.8, 0.0)])  # surface at 3.05
    assert np.all(np.asarray(s.obs[HAZARD_LIDAR]) == 0.0)
    assert np.all(np.asarray(s.obs[GOAL_LIDAR]) == 0.0)


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
    # the three placed hazards (distances 0.5, 1.5, 2.0) first, then the parked ones far away
    for i, p in enumerate([(0.2, -0.9), (-1.3, -0.4), (0.2, 1.6)]):
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
