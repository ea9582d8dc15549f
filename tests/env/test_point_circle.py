"""PointCircle3 on hand-placed states: the tangential reward, the boundary cost in x and y, the
hazard zones, the analytic circle lidar in the observation, and the start distribution.

Compiled programs: the env's ``reset``, ``step`` and the hand-placement program
(``tests/env/arrange.py``); levels 1 and 2 only by ``eval_shape`` and pure cost terms.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import crax
from crax.bodies.point import Point
from crax.core.context import Context
from crax.core.params import TaskParam
from crax.suites.circle import Circle
from tests.env.arrange import Arranger
from tests.env.conftest import compiled

W = 2 * math.pi / 16
CIRCLE_LIDAR, HAZARD_LIDAR, HAZARD_COMPASS = slice(12, 28), slice(28, 44), slice(44, 48)


@functools.cache
def env3():
    c = compiled("PointCircle3", episode_length=5)
    return c, Arranger(c)


def circle_reward(xy, velocity, radius=1.5):
    x, y = xy
    u, v = velocity
    rho = math.hypot(x, y)
    return 0.1 * ((-u * y + v * x) / rho) / (1 + abs(rho - radius))


# ---------------------------------------------------------------------------------------------
# Reward: 0.1 v_tan / (1 + |rho - 1.5|), v_tan counter-clockwise positive, from the torso's world
# velocity at the end of the step (DECISIONS 42), not from the displacement over the step.


@pytest.mark.parametrize(
    ("before", "after", "velocity"),
    [
        ((1.5, 0.0), (1.5, 0.08), (0.0, 1.0)),  # on the circle, counter-clockwise at 1 m/s: 0.1
        ((1.5, 0.0), (1.5, -0.08), (0.0, -1.0)),  # clockwise: negative
        ((0.0, 0.5), (-0.04, 0.5), (-0.5, 0.0)),  # inside (rho 0.5): the distance from the track halves it
        ((1.0, 0.0), (1.08, 0.0), (1.0, 0.0)),  # radial: no reward
        ((-0.3, -0.9), (-0.25, -0.95), (0.6, -0.6)),
        ((1.5, 0.0), (1.5, 0.0), (0.0, 0.7)),  # no displacement, yet moving: the velocity counts
    ],
)
@pytest.mark.slow
def test_tangential_reward_on_hand_placed_states(before, after, velocity):
    c, arrange = env3()
    env = c.env
    s0, s1 = arrange(before, 0.0), arrange(after, 0.0, qvel=(*velocity, 0.0))
    _, tr = env.suite.transition(env.mjx_model, s0.data, s1.data, s1.info["task"], jnp.zeros(2))
    want = circle_reward(after, velocity)
    assert float(tr.reward) == pytest.approx(want, abs=1e-5)
    assert float(tr.rewards["circle"]) == pytest.approx(want, abs=1e-5)
    assert set(tr.rewards) == {"circle"}


def test_reward_signs_and_scale():
    assert circle_reward((1.5, 0.0), (0.0, 1.0)) == pytest.approx(0.1)
    assert circle_reward((1.5, 0.08), (0.0, 1.0)) == pytest.approx(0.1 * 1.5 / math.hypot(1.5, 0.08) / (1 + (math.hypot(1.5, 0.08) - 1.5)))
    assert circle_reward((1.5, 0.0), (0.0, -1.0)) < 0
    assert circle_reward((1.08, 0.0), (1.0, 0.0)) == 0.0


def test_step_reward_matches_the_formula_and_metrics_name_every_term():
    c, arrange = env3()
    env = c.env
    state = arrange((0.3, -1.0), 1.2, qvel=(0.6, 0.4, 0.0))
    nxt = c.step(state, jnp.asarray([0.8, 0.2]))
    before = np.asarray(env.body.position(state.data)[:2], np.float64)
    after = np.asarray(env.body.position(nxt.data)[:2], np.float64)
    assert np.linalg.norm(after - before) > 0.02
    velocity = np.asarray(nxt.data.qvel[:2], np.float64)  # the Point's slides run along world x and y
    assert float(nxt.reward) == pytest.approx(circle_reward(after, velocity), abs=1e-5)
    assert {k for k in nxt.metrics if k.startswith(("reward/", "cost/"))} == {
        "reward/circle", "cost/boundary", "cost/cylinder_zones"
    }


@pytest.mark.slow
def test_a_task_param_set_after_a_step_reaches_the_next_compiled_step():
    """TaskEnv records its step once per env; a TaskParam changed with ``nnx.update`` (a curriculum
    stage, docs/plugins.md) must reach every step traced afterwards, not the recorded value."""
    c, arrange = env3()
    env = crax.make("PointCircle3", episode_length=5)  # its own env: the compiled one is shared
    state = arrange((0.3, -1.0), 1.2, qvel=(0.6, 0.4, 0.0))
    action = jnp.asarray([0.8, 0.2])
    before = float(jax.jit(env.step)(state, action).reward)
    assert before == pytest.approx(float(c.step(state, action).reward))
    params = nnx.state(env.suite, TaskParam)
    params["reward_scale"][...] = jnp.asarray(0.3)
    nnx.update(env.suite, params)
    assert float(jax.jit(env.step)(state, action).reward) == pytest.approx(3.0 * before, rel=1e-5)
    assert before != 0.0


# ---------------------------------------------------------------------------------------------
# Costs: boundary (level 3: |x| > 0.975 or |y| > 0.975) and zones (level 3: 2 zones r 0.2).


@pytest.mark.parametrize(
    ("agent", "outside"),
    [((0.0, 0.0), False), ((0.97, 0.0), False), ((0.98, 0.0), True), ((-1.2, 0.3), True),
     ((0.2, 0.96), False), ((0.2, 0.99), True), ((-0.5, -1.4), True), ((0.9, -0.9), False)],
)
def test_boundary_cost_in_x_and_y(agent, outside):
    _, arrange = env3()
    s = arrange(agent, 0.7)
    assert float(s.metrics["cost/boundary"]) == (1.0 if outside else 0.0)
    assert float(s.metrics["cost/cylinder_zones"]) == 0.0
    assert float(s.cost) == (1.0 if outside else 0.0)


@pytest.mark.parametrize("axis", [0, 1])
def test_crossing_the_boundary_in_a_step_costs(axis):
    c, arrange = env3()
    xy, qvel = [0.0, 0.0], [0.0, 0.0, 0.0]
    xy[axis], qvel[axis] = 0.95, 1.0  # 0.025 inside, moving out at 1 m/s
    state = arrange(tuple(xy), 0.0, qvel=qvel)
    assert float(state.metrics["cost/boundary"]) == 0.0
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.data.qpos[axis]) > 0.975
    assert float(nxt.metrics["cost/boundary"]) == 1.0 and float(nxt.cost) == 1.0


def test_no_walls():
    # Beyond where Goal's walls stand the agent moves on freely, and there is no contact term.
    c, arrange = env3()
    state = arrange((2.95, 0.0), 0.0, qvel=(2.0, 0.0, 0.0))
    nxt = c.step(state, jnp.asarray([1.0, 0.0]))
    assert float(nxt.data.qpos[0]) > 3.05
    assert "cost/contact" not in nxt.metrics


def test_zone_cost():
    _, arrange = env3()
    s = arrange((0.5, 0.2), 0.0, cylinder_zones=[(0.55, 0.2), (0.5, 0.1)])
    want = 2.0 * ((1 - 0.05 / 0.2) + (1 - 0.1 / 0.2))
    assert float(s.metrics["cost/cylinder_zones"]) == pytest.approx(want, rel=1e-5)
    assert float(s.cost) == pytest.approx(want, rel=1e-5)


def test_level1_has_no_y_boundary():
    suite = Circle(Point(), 1)
    (bound,) = [c for c in suite.constraints if c.term == "boundary"]

    def cost(x, y):
        ctx = Context(model=None, data=None, agent_xy=jnp.asarray([x, y]), agent_yaw=jnp.zeros(()), task={})
        return float(bound.cost(ctx))

    assert cost(1.1, 0.0) == 0.0 and cost(1.13, 0.0) == 1.0 and cost(-1.13, 0.5) == 1.0
    assert cost(0.0, 2.5) == 0.0 and cost(0.0, -2.5) == 0.0
    assert [c.term for c in suite.constraints] == ["boundary"]  # no hazards at level 1
    assert Circle(Point(), 1, boundary_cost=3.0, y_bound=0.5).constraints[0].cost(
        Context(model=None, data=None, agent_xy=jnp.asarray([0.0, 0.6]), agent_yaw=jnp.zeros(()), task={})
    ) == 3.0


# ---------------------------------------------------------------------------------------------
# Observation: the circle lidar against hand geometry; hazard lidar and compasses.


@pytest.mark.parametrize(("agent", "yaw"), [((0.0, 0.0), 0.0), ((1.0, 0.0), 0.0), ((-0.6, 0.7), 2.0)])
def test_circle_lidar_in_observation(agent, yaw):
    _, arrange = env3()
    obs = np.asarray(arrange(agent, yaw).obs)
    theta = yaw + (np.arange(16) + 0.5) * W
    dirs = np.stack([np.cos(theta), np.sin(theta)], -1)
    p = np.asarray(agent)
    b = dirs @ p
    t = -b + np.sqrt(b**2 - (p @ p - 1.5**2))  # inside the circle: the far root
    np.testing.assert_allclose(obs[CIRCLE_LIDAR], (6 - t) / 6, atol=1e-5)


def test_hazard_lidar_and_compasses_see_the_zones_and_no_walls():
    _, arrange = env3()
    s = arrange((0.0, 0.0), 0.0, cylinder_zones=[(1.0, 0.0), (0.0, -2.0)])
    obs = np.asarray(s.obs)
    lidar = np.zeros(16)
    lidar[0], lidar[15] = 2 / 3, 2 / 3  # straight ahead, at the boundary of bins 0 and 15
    lidar[12], lidar[11] = 1 / 3, 1 / 3  # straight right, 2 m
    np.testing.assert_allclose(obs[HAZARD_LIDAR], lidar, atol=1e-5)
    np.testing.assert_allclose(obs[HAZARD_COMPASS], [1.0, 0.0, 0.0, -1.0], atol=1e-5)


@pytest.mark.slow
def test_observation_sizes_per_level():
    sizes = {lv: crax.make(f"PointCircle{lv}").state_shapes.obs.shape for lv in (1, 2, 3)}
    assert sizes == {1: (28,), 2: (46,), 3: (48,)}


# ---------------------------------------------------------------------------------------------
# Start: agent uniform in +-0.8 with a random yaw, hazards clear of it.


def test_start_distribution():
    c, _ = env3()
    suite, data0 = c.env.suite, c.env._data0

    @jax.jit
    @jax.vmap
    def start(key):
        data, positions = suite.sample_start(data0, key)
        return data.qpos, positions

    qpos, positions = jax.tree.map(np.asarray, start(jax.random.split(jax.random.key(5), 512)))
    agent = qpos[:, :2]
    assert np.all(np.abs(agent) <= 0.8)
    assert agent.min() < -0.75 and agent.max() > 0.75  # fills the square
    assert np.std(qpos[:, 2]) > 1.0
    zones = positions["cylinder_zones"]
    assert np.all(np.abs(zones) <= 1.5)
    assert np.all(np.linalg.norm(zones - agent[:, None], axis=-1) >= 0.4 + 0.2 - 1e-5)
