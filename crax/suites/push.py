"""Push: push a block into a goal zone that may move (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any, Literal, cast

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, REAL, TaskParam
from crax.core.scene import GROUP_GOAL
from crax.objects.block import GROUP_PROP, Block
from crax.objects.pillars import CubePillars
from crax.objects.placement import sample_layout
from crax.objects.zones import CubeZones, GoalZone
from crax.sensors.compass import Compass, Distance
from crax.suites.base import Transition
from crax.suites.navigation import ARENA_PARAMS, NAVIGATION_PARAMS, NavigationSuite

GOAL_VELOCITY: dict[int, float] = {1: 0.0, 2: 0.3, 3: 0.6}
"""Goal speed (m/s) by level."""


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
      goal_radius: radius of the goal zone.
      goal_velocity: goal speed; defaults to the level's (0, 0.3, 0.6 m/s).
      alpha_block_goal, reward_goal, agent_block_scale: reward weights α_bg, α_goal, α_ab.
      block_half, block_density: the block.
      cost_scale, collision_cost: zone weight, cost per cube or wall in contact.
      lidar, lidar_bins, lidar_max_dist, hazard_compasses: as Goal.
      extent: layout and goal-motion half-extent; walls stand at ``wall_extent``.
      num_candidates: layout candidates per object.
    """

    name = "Push"
    params = {
        **NAVIGATION_PARAMS,
        **ARENA_PARAMS,
        "goal_radius": POSITIVE,
        "goal_velocity": NON_NEGATIVE,
        "alpha_block_goal": REAL,
        "reward_goal": REAL,
        "agent_block_scale": REAL,
        "block_half": POSITIVE,
        "block_density": POSITIVE,
    }

    @classmethod
    def level_params(cls, level: int) -> dict[str, Any]:
        return {"goal_velocity": GOAL_VELOCITY[level]}

    def __init__(
        self,
        body: Body,
        level: int,
        *,
        goal_radius: float = 0.3,
        goal_velocity: float | None = None,
        alpha_block_goal: float = 1.0,
        reward_goal: float = 1.0,
        agent_block_scale: float = 0.1,
        block_half: float = 0.1,
        block_density: float = 0.25,
        cost_scale: float = 2.0,
        collision_cost: float = 3.0,
        lidar: Literal["pseudo", "natural"] = "pseudo",
        lidar_bins: int = 16,
        lidar_max_dist: float = 3.0,
        hazard_compasses: int = 8,
        extent: float = 2.5,
        wall_extent: float = 3.0,
        num_candidates: int = 64,
    ):
        hazards = {"cube_pillars": CubePillars(6, half=0.2, height=0.4), "cube_zones": CubeZones(6, half=0.3)}
        props = {
            "goal": GoalZone(goal_radius, keepout=goal_radius + 0.1),
            "block": Block(block_half, density=block_density, limit=wall_extent - block_half),
        }
        self._setup(
            body, level, hazards, props,
            cost_scale=cost_scale, collision_cost=collision_cost, lidar=lidar, lidar_bins=lidar_bins,
            lidar_max_dist=lidar_max_dist, extent=extent, wall_extent=wall_extent, num_candidates=num_candidates,
        )
        speed = GOAL_VELOCITY[level] if goal_velocity is None else goal_velocity
        self.goal_radius = TaskParam(jnp.asarray(goal_radius, jnp.float32))
        self.goal_velocity = TaskParam(jnp.asarray(speed, jnp.float32))
        self.alpha_block_goal = TaskParam(jnp.asarray(alpha_block_goal, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(reward_goal, jnp.float32))
        self.agent_block_scale = TaskParam(jnp.asarray(agent_block_scale, jnp.float32))
        self.sensors = nnx.List([
            self.lidar_for("goal", GROUP_GOAL),
            self.lidar_for("block", GROUP_PROP),
            self.hazard_lidar(),
            self.hazard_compass(hazard_compasses),
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
