"""Cost terms on hand-built inputs: zones (proximity), velocity threshold (binary and hinge).

Contact costs need the physics and are tested on a real scene in ``test_point_goal3.py``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from crax.core.context import Context
from crax.costs import HazardProximity, VelocityThreshold
from crax.objects import CubeZones, CylinderZones, GoalZone


def ctx(agent_xy=(0.0, 0.0), yaw=0.0, **task):
    return Context(model=None, data=None, agent_xy=jnp.asarray(agent_xy, jnp.float32),
                   agent_yaw=jnp.asarray(yaw, jnp.float32),
                   task={k: jnp.asarray(v, jnp.float32) for k, v in task.items()})


def proximity(zones, label, **kw):
    zones.label = label
    return HazardProximity(zones, **kw)


@pytest.mark.parametrize("d", [0.0, 0.1, 0.25, 0.399, 0.4, 0.5, 2.0])
def test_cylinder_zone_cost_is_scaled_linear_falloff(d):
    zones = CylinderZones(1, 0.4)
    term = proximity(zones, "cylinder_zones")
    assert term.term == "cylinder_zones"
    for direction in ((1.0, 0.0), (-0.6, 0.8)):
        agent = (0.7, -0.3)
        xy = [[agent[0] + d * direction[0], agent[1] + d * direction[1]]]
        cost = float(term.cost(ctx(agent, yaw=1.3, cylinder_zones=xy)))
        assert cost == pytest.approx(2.0 * max(0.0, 1.0 - d / 0.4), abs=1e-6)


def test_cylinder_zones_sum_over_zones_and_use_cost_scale():
    zones = CylinderZones(3, 0.35)
    xy = [[0.1, 0.0], [0.0, -0.2], [1.0, 1.0]]  # two overlap the agent at the origin, one far
    want = (1 - 0.1 / 0.35) + (1 - 0.2 / 0.35)
    assert float(proximity(zones, "z").cost(ctx(z=xy))) == pytest.approx(2.0 * want, rel=1e-6)
    assert float(proximity(zones, "z", cost_scale=0.5).cost(ctx(z=xy))) == pytest.approx(0.5 * want, rel=1e-6)
    np.testing.assert_allclose(np.asarray(zones.cost(jnp.zeros(2), jnp.asarray(xy))),
                               [1 - 0.1 / 0.35, 1 - 0.2 / 0.35, 0.0], rtol=1e-6)


@pytest.mark.parametrize(
    ("offset", "inside"),
    [((0.0, 0.0), True), ((0.25, -0.29), True), ((0.3, 0.3), True), ((-0.3, 0.0), True),
     ((0.31, 0.0), False), ((0.0, -0.305), False), ((0.32, 0.32), False), ((0.29, 0.4), False)],
)
def test_cube_zone_cost_is_indicator_of_axis_aligned_square(offset, inside):
    zones = CubeZones(1, 0.3)
    agent = (-1.0, 0.5)
    xy = [[agent[0] + offset[0], agent[1] + offset[1]]]
    for yaw in (0.0, 0.8):  # the square is axis-aligned: the agent's heading does not matter
        cost = float(proximity(zones, "cube_zones").cost(ctx(agent, yaw=yaw, cube_zones=xy)))
        assert cost == (2.0 if inside else 0.0)


def test_cube_zone_diagonal_corner_is_outside_a_disc_but_inside_the_square():
    # (0.28, 0.28) is 0.396 from the centre: inside the square of half 0.3 (a disc of radius 0.3 would miss)
    assert float(proximity(CubeZones(1, 0.3), "c").cost(ctx(c=[[0.28, 0.28]]))) == 2.0
    assert float(proximity(CubeZones(2, 0.3), "c").cost(ctx(c=[[0.1, 0.0], [0.0, 0.2]]))) == 4.0


def test_goal_zone_costs_nothing():
    goal = GoalZone(0.3)
    assert goal.count == 1
    np.testing.assert_array_equal(np.asarray(goal.cost(jnp.zeros(2), jnp.zeros((1, 2)))), [0.0])


@pytest.mark.parametrize(
    ("v", "binary", "hinge"),
    [(0.0, 0.0, 0.0), (-5.0, 0.0, 0.0), (3.21, 0.0, 0.0), (3.22, 1.0, 0.01), (5.0, 1.0, 1.79)],
)
def test_velocity_threshold_binary_and_hinge(v, binary, hinge):
    c = ctx(velocity=v)
    assert float(VelocityThreshold(3.21).cost(c)) == binary  # binary is the default mode
    assert float(VelocityThreshold(3.21, mode="hinge").cost(c)) == pytest.approx(hinge, abs=1e-5)
    assert float(VelocityThreshold(3.21, mode="binary", weight=2.5).cost(c)) == 2.5 * binary
    assert float(VelocityThreshold(3.21, mode="hinge", weight=2.0).cost(c)) == pytest.approx(2 * hinge, abs=1e-5)
    assert VelocityThreshold(3.21).term == "velocity"


@pytest.mark.parametrize("level", [1, 2, 3])
def test_velocity_threshold_levels_at_the_boundary(level):
    tau = 3.21 * {1: 1.0, 2: 0.75, 3: 0.5}[level]
    binary, hinge = VelocityThreshold(tau), VelocityThreshold(tau, mode="hinge")
    assert float(binary.cost(ctx(velocity=tau + 1e-3))) == 1.0
    assert float(binary.cost(ctx(velocity=tau - 1e-3))) == 0.0
    assert float(hinge.cost(ctx(velocity=tau + 0.5))) == pytest.approx(0.5, abs=1e-5)


def test_velocity_threshold_rejects_unknown_mode():
    with pytest.raises(ValueError, match="binary, hinge"):
        VelocityThreshold(1.0, mode="quadratic")
