"""Goal: reach a goal zone that respawns elsewhere on arrival (docs/SPEC.md section 3)."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import POSITIVE, REAL, TaskParam
from crax.core.scene import GROUP_GOAL
from crax.objects.base import Placeable
from crax.objects.pillars import CubePillars, CylinderPillars
from crax.objects.placement import sample_layout
from crax.objects.zones import CubeZones, CylinderZones, GoalZone
from crax.suites.base import Transition
from crax.suites.navigation import ARENA_PARAMS, NAVIGATION_PARAMS, NavigationSuite


@dataclasses.dataclass(frozen=True)
class GoalLevel:
    """One difficulty level of Goal: goal radius and the hazards by label."""

    goal_radius: float
    hazards: tuple[tuple[str, type[Placeable], dict[str, float]], ...]


LEVELS: dict[int, GoalLevel] = {
    1: GoalLevel(0.20, (("cylinder_zones", CylinderZones, {"count": 12, "radius": 0.4}),)),
    2: GoalLevel(
        0.18,
        (
            ("cylinder_zones", CylinderZones, {"count": 8, "radius": 0.4}),
            ("cylinder_pillars", CylinderPillars, {"count": 8, "radius": 0.3, "height": 0.4}),
        ),
    ),
    3: GoalLevel(
        0.16,
        (
            ("cube_zones", CubeZones, {"count": 6, "half": 0.3}),
            ("cylinder_zones", CylinderZones, {"count": 6, "radius": 0.35}),
            ("cube_pillars", CubePillars, {"count": 4, "half": 0.25, "height": 0.5}),
            ("cylinder_pillars", CylinderPillars, {"count": 4, "radius": 0.25, "height": 0.4}),
        ),
    ),
}


class Goal(NavigationSuite):
    """Reach the goal; ``r = α_dist (d_{t−1} − d_t) + α_goal · n_reached``.

    Observation: body obs, goal lidar, hazard lidar, goal compass and compasses to the 8 nearest
    hazards (Point: 12 + 16 + 16 + 2 + 16 = 62); the walls count as hazards for the hazard lidar
    and compasses (their points nearest the agent). Costs: ``cost/<zone label>`` for each group of
    zones (proximity) and ``cost/contact`` for pillars and walls.

    Args:
      body: a navigation body.
      level: 1, 2 or 3.
      goal_radius: defaults to the level's (0.20, 0.18, 0.16).
      alpha_dist: weight of the distance progress.
      reward_goal: reward per goal reached.
      cost_scale: weight of zone costs.
      collision_cost: cost per collidable hazard or wall in contact.
      lidar: ``pseudo`` (object centres) or ``natural`` (``mjx.ray``).
      lidar_bins, lidar_max_dist: lidar resolution and range.
      hazard_compasses: number of nearest hazards with a compass.
      extent: layout half-extent; walls stand at ``wall_extent``.
      num_candidates: layout candidates per object.
    """

    name = "Goal"
    params = {**NAVIGATION_PARAMS, **ARENA_PARAMS, "goal_radius": POSITIVE, "alpha_dist": REAL, "reward_goal": REAL}

    @classmethod
    def level_params(cls, level: int) -> dict[str, Any]:
        return {"goal_radius": LEVELS[level].goal_radius}

    def __init__(
        self,
        body: Body,
        level: int,
        *,
        goal_radius: float | None = None,
        alpha_dist: float = 1.0,
        reward_goal: float = 1.0,
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
        spec = LEVELS[level]
        radius = spec.goal_radius if goal_radius is None else goal_radius
        hazards = {label: cls(**kwargs) for label, cls, kwargs in spec.hazards}
        self._setup(
            body, level, hazards, {"goal": GoalZone(radius, keepout=0.3)},
            cost_scale=cost_scale, collision_cost=collision_cost, lidar=lidar, lidar_bins=lidar_bins,
            lidar_max_dist=lidar_max_dist, extent=extent, wall_extent=wall_extent, num_candidates=num_candidates,
        )
        self.goal_radius = TaskParam(jnp.asarray(radius, jnp.float32))
        self.alpha_dist = TaskParam(jnp.asarray(alpha_dist, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(reward_goal, jnp.float32))
        self.sensors = nnx.List([
            self.lidar_for("goal", GROUP_GOAL),
            self.hazard_lidar(),
            self.compass_for("goal"),
            self.hazard_compass(hazard_compasses),
        ])

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        key, sub = jax.random.split(key)
        data, positions = self.sample_start(data, sub)
        return data, {**positions, "key": key}

    def transition(self, model, before, data, task, action):
        agent_xy = self.body.position(data)[:2]
        d_before = jnp.linalg.norm(self.body.position(before)[:2] - task["goal"][0])
        d = jnp.linalg.norm(agent_xy - task["goal"][0])
        reached = d <= self.goal_radius[...]
        key, sub = jax.random.split(task["key"])
        fresh = sample_layout(
            sub, jnp.asarray([self.props["goal"].keepout]), self.extent,
            num_candidates=16, fixed=self.occupied(task, agent_xy, skip="goal"),
        )
        goal = jnp.where(reached, fresh, task["goal"])
        data = self.move(data, {"goal": goal})
        rewards = {
            "distance": self.alpha_dist[...] * (d_before - d),
            "goal": self.reward_goal[...] * reached.astype(jnp.float32),
        }
        reward = rewards["distance"] + rewards["goal"]
        new_task = {**task, "goal": goal, "key": key}
        return data, Transition(
            task=new_task, rewards=rewards, reward=reward, terminated=~self.body.healthy(data),
            extra_metrics={"goals_reached": reached.astype(jnp.float32)},
        )
