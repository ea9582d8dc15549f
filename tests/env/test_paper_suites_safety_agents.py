"""Safety-Gymnasium's Car, Doggo and Racecar in the paper's navigation suites (``CarGoal1``,
``DoggoButton2``, ...): the suites see and cost the same world from each of them as from the Point.

Hand-placed states go through MuJoCo's forward pass in C (``Compiled.arrange``); only the observation
and cost code is jitted.
"""

from __future__ import annotations

import numpy as np
import pytest

import crax
from crax.bodies import Car, Doggo, Racecar
from crax.bodies.base import NAVIGATION
from tests.env.conftest import compiled

BODIES = (Car, Doggo, Racecar)


def test_the_three_bodies_serve_the_papers_navigation_suites():
    ids = set(crax.env_ids())
    for body in BODIES:
        assert body.kinds == frozenset({NAVIGATION})
        for suite in ("Goal", "Button", "Circle", "Push"):
            assert {f"{body.name}{suite}{level}" for level in (1, 2, 3)} <= ids
        assert f"{body.name}Velocity1" not in ids  # no measured speed limit: not a locomotion body
    body, suite, level = crax.parse_id("DoggoButton2")
    assert (body, suite.name, level) == (Doggo, "Button", 2)


@pytest.mark.slow  # 4-10 s each (PointGoal1's observation has its fast-tier test)
@pytest.mark.parametrize("body", [b.name for b in BODIES])
def test_goal_sees_and_costs_the_world_as_from_the_point(body):
    point, other = compiled("PointGoal1"), compiled(f"{body}Goal1")
    layout = {"goal": [(1.2, 0.7)], "cylinder_zones": [(0.1, -0.05), (-0.9, 1.1)]}
    p = point.arrange((0.0, 0.0), 0.6, **layout)
    o = other.arrange((0.0, 0.0), 0.6, **layout)
    n_point, n_other = point.env.body.observe(p.data).shape[0], other.env.body.observe(o.data).shape[0]
    assert o.obs.shape[0] - n_other == p.obs.shape[0] - n_point == 50  # the suite's sensors after the body's
    np.testing.assert_allclose(np.asarray(o.obs[n_other:]), np.asarray(p.obs[n_point:]), atol=1e-5)
    assert float(o.metrics["cost/cylinder_zones"]) == pytest.approx(float(p.metrics["cost/cylinder_zones"]), rel=1e-5)
    assert float(o.metrics["cost/cylinder_zones"]) > 0
