"""Push: push a block into a goal zone that may move (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, REAL, Param, TaskParam
from crax.core.scene import GROUP_GOAL
from crax.objects.block import Block
from crax.objects.pillars import CubePillars
from crax.objects.placement import sample_layout
from crax.objects.prop import GROUP_PROP
from crax.objects.zones import CubeZones, GoalZone
from crax.sensors.compass import Compass, Distance
from crax.suites.base import Transition
from crax.suites.navigation import ARENA_PARAMS, NAVIGATION_PARAMS, NavigationSuite


def bounce(pos: jax.Array, vel: jax.Array, extent: float) -> tuple[jax.Array, jax.Array]:
    """Reflects positions that left ``[-extent, extent]`` back inside and flips those velocity components."""
    over, under = pos > extent, pos < -extent
    pos = jnp.where(over, 2 * extent - pos, jnp.where(under, -2 * extent - pos, pos))
    return pos, jnp.where(over | under, -vel, vel)


class Push(NavigationSuite):
    """Push the block into the goal zone (r 0.3), which then respawns.

    ``r = α_bg (d^bg_{t−1} − d^bg_t) + α_goal 1[block reached goal] + α_ab (d^ab_{t−1} − d^ab_t)``
    (``reward/block_goal``, ``reward/goal``, ``reward/agent_block``): d^bg the block–goal and d^ab
    the agent–block distance of centres on the plane, both measured against the goal's position at
    the start of the step; reached when d^bg ≤ goal radius. The goal then moves by
    ``goal_velocity · dt`` along its direction, bouncing off the layout extents (levels 2 and 3),
    or respawns (new place, new random direction) when reached.

    Hazards (every level): 6 collidable cubes (half 0.2, ``cost/contact`` with the walls) and 6
    cube zones (half 0.3, ``cost/cube_zones``). Only the agent pays: the block passes through the
    hazards (collision categories, docs/SPEC.md decision 52).

    Observation: body obs, goal lidar, block lidar, hazard lidar, compasses to the 8 nearest
    hazards, then agent→block and block→goal compasses and the agent–block and block–goal
    distances / 3 (Point: 12 + 16 + 16 + 16 + 16 + 2 + 2 + 2 = 82).

    Args:
      body: a navigation body.
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Push"
    params = {
        "goal_radius": Param(0.3, POSITIVE, "radius of the goal zone (m)"),
        "goal_velocity": Param(valid=NON_NEGATIVE, doc="speed of the goal (m/s)", levels={1: 0.0, 2: 0.3, 3: 0.6}),
        "alpha_block_goal": Param(1.0, REAL, "weight α_bg of the block's progress towards the goal"),
        "reward_goal": Param(1.0, REAL, "reward α_goal per goal reached by the block"),
        "agent_block_scale": Param(0.1, REAL, "weight α_ab of the agent's progress towards the block"),
        "block_half": Param(0.1, POSITIVE, "half side of the block (m)"),
        "block_density": Param(0.25, POSITIVE, "density of the block (kg/m³)"),
        **NAVIGATION_PARAMS,
        **ARENA_PARAMS,
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        hazards = {"cube_pillars": CubePillars(6, half=0.2, height=0.4), "cube_zones": CubeZones(6, half=0.3)}
        props = {
            "goal": GoalZone(v.goal_radius, keepout=v.goal_radius + 0.1),
            "block": Block(v.block_half, density=v.block_density, limit=v.wall_extent - v.block_half),
        }
        self._setup(body, level, hazards, props, v)
        self.goal_radius = TaskParam(jnp.asarray(v.goal_radius, jnp.float32))
        self.goal_velocity = TaskParam(jnp.asarray(v.goal_velocity, jnp.float32))
        self.alpha_block_goal = TaskParam(jnp.asarray(v.alpha_block_goal, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))
        self.agent_block_scale = TaskParam(jnp.asarray(v.agent_block_scale, jnp.float32))
        self.sensors = nnx.List([
            self.lidar_for("goal", GROUP_GOAL),
            self.lidar_for("block", GROUP_PROP),
            self.hazard_lidar(),
            self.hazard_compass(v.hazard_compasses),
            Compass("block"),
            Compass("goal", origin="block"),
            Distance("block"),
            Distance("goal", origin="block"),
        ])

    @property
    def block(self) -> Block:
        return cast(Block, self.props["block"])

    def _direction(self, key: jax.Array) -> jax.Array:
        angle = jax.random.uniform(key, (), minval=-jnp.pi, maxval=jnp.pi)
        return self.goal_velocity[...] * jnp.stack([jnp.cos(angle), jnp.sin(angle)])

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        key, k_start, k_dir = jax.random.split(key, 3)
        data, positions = self.sample_start(data, k_start)
        return data, {**positions, "goal_velocity": self._direction(k_dir), "key": key}

    def transition(self, model, before, data, task, action):
        agent0, agent = self.body.position(before)[:2], self.body.position(data)[:2]
        block0, block = self.block.position(before)[0], self.block.position(data)[0]
        goal = task["goal"][0]
        d_bg0, d_bg = jnp.linalg.norm(block0 - goal), jnp.linalg.norm(block - goal)
        d_ab0, d_ab = jnp.linalg.norm(agent0 - block0), jnp.linalg.norm(agent - block)
        reached = d_bg <= self.goal_radius[...]
        rewards = {
            "block_goal": self.alpha_block_goal[...] * (d_bg0 - d_bg),
            "goal": self.reward_goal[...] * reached.astype(jnp.float32),
            "agent_block": self.agent_block_scale[...] * (d_ab0 - d_ab),
        }
        key, k_place, k_dir = jax.random.split(task["key"], 3)
        task = {**task, "block": block[None]}
        moved, velocity = bounce(goal + task["goal_velocity"] * self.body.dt, task["goal_velocity"], self.extent)
        fresh = sample_layout(
            k_place, jnp.asarray([self.props["goal"].keepout]), self.extent,
            num_candidates=16, fixed=self.occupied(task, agent, skip="goal"),
        )[0]
        goal = jnp.where(reached, fresh, moved)[None]
        velocity = jnp.where(reached, self._direction(k_dir), velocity)
        data = self.move(data, {"goal": goal})
        new_task = {**task, "goal": goal, "goal_velocity": velocity, "key": key}
        return data, Transition(
            task=new_task, rewards=rewards, reward=rewards["block_goal"] + rewards["goal"] + rewards["agent_block"],
            terminated=~self.body.healthy(data), extra_metrics={"goals_reached": reached.astype(jnp.float32)},
        )
