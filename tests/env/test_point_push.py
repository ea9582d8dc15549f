"""PointPush2 (goal speed 0.3 m/s) on hand-placed states: the three reward terms and the goal's
respawn when the block reaches it, the moving goal bouncing off the extents, the block passing
through hazards at no cost, the extra observation values, and a push through the physics.

Compiled programs: the env's ``reset`` and ``step``, the hand-placement program
(``tests/env/arrange.py``) and the suite's ``transition``; other levels only by configuration.
"""

from __future__ import annotations

import functools
import math
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.bodies.point import Point
from crax.suites.push import Push, bounce
from tests.env.arrange import Arranger
from tests.env.conftest import compiled

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

DT, SPEED, EXTENT = 0.08, 0.3, 2.5
EXTRA = slice(76, 82)  # agent->block compass, block->goal compass, distances / 3


@functools.cache
def env2():
    c = compiled("PointPush2")
    env = c.env

    @jax.jit
    def terms(s0, s1):
        _, tr = env.suite.transition(env.mjx_model, s0.data, s1.data, s1.info["task"], jnp.zeros(2))
        return {"task": tr.task, "rewards": tr.rewards, "reward": tr.reward}

    def transition(s0, s1):
        return None, types.SimpleNamespace(**terms(s0, s1))

    return c, Arranger(c), transition


def dist(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - np.asarray(b, np.float64)))


# ---------------------------------------------------------------------------------------------
# Reward terms: alpha_bg (d_bg progress) + alpha_goal 1[reached] + 0.1 (d_ab progress).


@pytest.mark.parametrize(
    ("agent0", "block0", "agent1", "block1", "goal"),
    [
        ((-1.0, 0.0), (0.0, 0.0), (-0.9, 0.0), (0.1, 0.0), (0.25, 0.0)),  # block into the goal
        ((-1.0, 0.0), (1.0, 0.0), (-0.8, 0.0), (1.0, 0.0), (2.0, 0.5)),  # agent approaches the block
        ((0.0, 0.0), (0.5, 0.5), (0.1, 0.1), (0.6, 0.55), (1.5, -1.0)),  # block pushed off at an angle
        ((0.0, 0.0), (0.0, 1.0), (0.0, 0.8), (0.0, 1.31), (0.0, 1.6)),  # d_bg 0.29: reached
    ],
)
@pytest.mark.slow
def test_reward_terms_on_hand_placed_states(agent0, block0, agent1, block1, goal):
    _, arrange, transition = env2()
    still = {"goal": [goal], "goal_velocity": (0.0, 0.0)}
    s0 = arrange(agent0, 0.0, block=[block0], **still)
    s1 = arrange(agent1, 0.0, block=[block1], **still)
    _, tr = transition(s0, s1)
    reached = dist(block1, goal) <= 0.3
    want = {
        "block_goal": dist(block0, goal) - dist(block1, goal),
        "goal": 1.0 if reached else 0.0,
        "agent_block": 0.1 * (dist(agent0, block0) - dist(agent1, block1)),
    }
    assert set(tr.rewards) == set(want)
    for k, v in want.items():
        assert float(tr.rewards[k]) == pytest.approx(v, abs=1e-5), k
    assert float(tr.reward) == pytest.approx(sum(want.values()), abs=1e-5)
    new_goal = np.asarray(tr.task["goal"][0])
    assert (dist(new_goal, goal) > 1e-6) == reached  # a still goal moves only by respawning
    np.testing.assert_allclose(np.asarray(tr.task["block"][0]), block1, atol=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_goal_respawns_away_with_a_new_direction_when_the_block_reaches_it(seed):
    c, arrange, _ = env2()
    state = arrange((-0.5, 0.0), 0.0, block=[(0.0, 0.0)], goal=[(0.1, 0.0)], goal_velocity=(0.3, 0.0),
                    cube_pillars=[(1.0, 1.0)], cube_zones=[(-1.0, -1.0)], seed=seed)
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.metrics["reward/goal"]) == 1.0 and float(nxt.metrics["goals_reached"]) == 1.0
    task = nxt.info["task"]
    goal = np.asarray(task["goal"][0])
    assert np.all(np.abs(goal) <= EXTENT)
    keep = c.env.suite.props["goal"].keepout
    assert dist(goal, task["block"][0]) >= keep + c.env.suite.block.keepout - 1e-5
    assert dist(goal, (1.0, 1.0)) >= keep + c.env.suite.hazards["cube_pillars"].keepout - 1e-5
    assert np.linalg.norm(np.asarray(task["goal_velocity"])) == pytest.approx(SPEED, rel=1e-5)
    # the goal's mocap body and its geoms (seen by a natural lidar) moved with it
    suite = c.env.suite
    np.testing.assert_allclose(np.asarray(nxt.data.mocap_pos[suite.props["goal"].mocap_ids[0], :2]), goal, atol=1e-6)
    np.testing.assert_allclose(np.asarray(nxt.data.geom_xpos[suite.props["goal"].geom_ids[0], :2]), goal, atol=1e-6)


def test_respawn_directions_differ():
    c, arrange, _ = env2()
    dirs = set()
    for seed in range(4):
        state = arrange((-0.5, 0.0), 0.0, block=[(0.0, 0.0)], goal=[(0.1, 0.0)], seed=seed)
        dirs.add(tuple(np.asarray(c.step(state, jnp.zeros(2)).info["task"]["goal_velocity"]).round(4)))
    assert len(dirs) == 4


# ---------------------------------------------------------------------------------------------
# The moving goal: goal_velocity * dt per step, bouncing off +-extent.


@pytest.mark.parametrize(
    ("goal", "velocity", "want_goal", "want_velocity"),
    [
        ((1.0, 1.0), (0.18, 0.24), (1.0 + 0.18 * DT, 1.0 + 0.24 * DT), (0.18, 0.24)),
        ((2.49, 0.0), (0.3, 0.0), (2 * EXTENT - 2.49 - 0.3 * DT, 0.0), (-0.3, 0.0)),  # east
        ((0.5, -2.49), (0.0, -0.3), (0.5, -2 * EXTENT + 2.49 + 0.3 * DT), (0.0, 0.3)),  # south
        ((-2.49, 2.495), (-0.18, 0.24), (-2 * EXTENT + 2.49 + 0.18 * DT, 2 * EXTENT - 2.495 - 0.24 * DT),
         (0.18, -0.24)),  # a corner: both components flip
    ],
)
def test_moving_goal_bounces_off_the_extents(goal, velocity, want_goal, want_velocity):
    c, arrange, _ = env2()
    state = arrange((0.0, 0.0), 0.0, block=[(-1.0, 0.0)], goal=[goal], goal_velocity=velocity)
    nxt = c.step(state, jnp.zeros(2))
    task = nxt.info["task"]
    np.testing.assert_allclose(np.asarray(task["goal"][0]), want_goal, atol=1e-5)
    np.testing.assert_allclose(np.asarray(task["goal_velocity"]), want_velocity, atol=1e-6)
    assert float(nxt.metrics["reward/goal"]) == 0.0
    np.testing.assert_allclose(np.asarray(nxt.data.mocap_pos[c.env.suite.props["goal"].mocap_ids[0], :2]),
                               want_goal, atol=1e-5)


def test_bounce_function():
    pos, vel = bounce(jnp.asarray([2.6, -2.7, 0.3]), jnp.asarray([1.0, -2.0, 3.0]), 2.5)
    np.testing.assert_allclose(np.asarray(pos), [2.4, -2.3, 0.3], atol=1e-6)
    np.testing.assert_allclose(np.asarray(vel), [-1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------------------------
# Hazards: only the agent pays; the block passes through them.


def test_block_inside_hazards_costs_nothing_and_passes_through():
    c, arrange, _ = env2()
    state = arrange((-2.0, -2.0), 0.0, block=[(1.0, 0.0)], cube_pillars=[(1.0, 0.0)], cube_zones=[(1.05, 0.05)],
                    goal=[(0.0, 2.0)], goal_velocity=(0.0, 0.0))
    assert float(state.cost) == 0.0
    assert {k: float(v) for k, v in state.metrics.items() if k.startswith("cost/")} == {
        "cost/contact": 0.0, "cost/cube_zones": 0.0
    }
    nxt = c.step(state, jnp.zeros(2))
    assert float(nxt.cost) == 0.0
    # no contact pushes it out of the pillar
    np.testing.assert_allclose(np.asarray(nxt.info["task"]["block"][0]), (1.0, 0.0), atol=1e-6)


def test_agent_pays_for_hazards():
    _, arrange, _ = env2()
    s = arrange((1.0, 0.0), 0.0, block=[(-1.0, 0.0)], cube_pillars=[(1.25, 0.0)])  # face 0.05 inside
    assert float(s.metrics["cost/contact"]) == 3.0
    s = arrange((1.0, 0.0), 0.0, block=[(-1.0, 0.0)], cube_zones=[(1.25, 0.25)])  # inside the square
    assert float(s.metrics["cost/cube_zones"]) == 2.0 and float(s.cost) == 2.0
    s = arrange((2.95, 0.0), 0.0, block=[(-1.0, 0.0)])
    assert float(s.metrics["cost/contact"]) == 3.0  # walls


def test_block_against_a_wall_costs_nothing():
    _, arrange, _ = env2()
    s = arrange((0.0, 0.0), 0.0, block=[(2.85, 0.0)])  # box face 0.05 into the east wall
    assert float(s.cost) == 0.0


# ---------------------------------------------------------------------------------------------
# Observation: the 6 extra values, the block lidar.


def test_extra_observation_values():
    _, arrange, _ = env2()
    agent, yaw, block, goal = (0.5, -0.5), 0.7, (1.5, 0.5), (1.5, 2.0)
    s = arrange(agent, yaw, block=[block], goal=[goal])
    c, s_ = math.cos(yaw), math.sin(yaw)

    def ego_unit(v):
        e = np.array([c * v[0] + s_ * v[1], -s_ * v[0] + c * v[1]])
        return e / np.linalg.norm(e)

    want = np.concatenate([
        ego_unit(np.subtract(block, agent)), ego_unit(np.subtract(goal, block)),
        [dist(agent, block) / 3, dist(block, goal) / 3],
    ])
    np.testing.assert_allclose(np.asarray(s.obs[EXTRA]), want, atol=1e-5)
    assert s.obs.shape == (82,)
    # block lidar (obs 28:44): the block straight ahead of an agent facing it
    s = arrange((0.0, 0.0), 0.0, block=[(1.2, 0.0)])
    lidar = np.asarray(s.obs[28:44])
    assert lidar[0] == pytest.approx(0.6, abs=1e-5) and lidar[15] == pytest.approx(0.6, abs=1e-5)


# ---------------------------------------------------------------------------------------------
# Physics: the agent pushes the block.


def test_agent_pushes_the_block():
    c, arrange, _ = env2()
    state = arrange((-0.3, 0.0), 0.0, block=[(0.0, 0.0)], goal=[(2.0, 0.0)], goal_velocity=(0.0, 0.0))
    rewards = []
    for _ in range(15):
        state = c.step(state, jnp.asarray([1.0, 0.0]))
        rewards.append(float(state.metrics["reward/block_goal"]))
    block = np.asarray(state.info["task"]["block"][0])
    assert block[0] > 0.3 and abs(block[1]) < 0.05  # pushed straight ahead
    assert float(state.data.qpos[0]) < block[0] - 0.15  # the agent stays behind it
    assert sum(rewards) == pytest.approx(2.0 - dist(block, (2.0, 0.0)), abs=1e-4)
    assert np.all(np.isfinite(np.asarray(state.obs)))


# ---------------------------------------------------------------------------------------------
# Levels and start.


def test_levels_and_start():
    for level in (1, 2, 3):
        suite, d = Push(Point(), level), Push.defaults(level)  # the declared defaults (crax.suites.push)
        assert float(suite.goal_velocity[...]) == pytest.approx(d["goal_velocity"])
        assert suite.hazards["cube_pillars"].count == 6 and suite.hazards["cube_pillars"].half == 0.2
        assert suite.hazards["cube_zones"].count == 6 and suite.hazards["cube_zones"].half == 0.3
        assert float(suite.goal_radius[...]) == pytest.approx(d["goal_radius"]) and suite.block.half == d["block_half"]
    shape = crax.make("PointPush1").state_shapes
    assert shape.obs.shape == (82,)
    assert {k for k in shape.metrics if k.startswith(("reward/", "cost/"))} == {
        "reward/block_goal", "reward/goal", "reward/agent_block", "cost/contact", "cost/cube_zones"
    }
    c, _, _ = env2()
    state = c.reset(jax.random.key(3))
    task = state.info["task"]
    block = np.asarray(task["block"][0])
    np.testing.assert_allclose(np.asarray(c.env.suite.block.position(state.data)[0]), block, atol=1e-6)
    agent = np.asarray(state.data.qpos[:2])
    assert dist(agent, block) >= c.env.suite.agent_keepout + c.env.suite.block.keepout - 1e-5
    assert np.linalg.norm(np.asarray(task["goal_velocity"])) == pytest.approx(SPEED, rel=1e-5)
