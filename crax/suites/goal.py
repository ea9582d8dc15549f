"""Goal: reach a goal zone that respawns elsewhere on arrival (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import POSITIVE, REAL, Param, TaskParam
from crax.core.scene import GROUP_GOAL
from crax.objects.base import Placeable
from crax.objects.pillars import CubePillars, CylinderPillars
from crax.objects.placement import sample_layout
from crax.objects.zones import CubeZones, CylinderZones, GoalZone
from crax.suites.base import Transition
from crax.suites.navigation import ARENA_PARAMS, NAVIGATION_PARAMS, NavigationSuite

HAZARDS: dict[int, tuple[tuple[str, type[Placeable], dict[str, float]], ...]] = {
    1: (("cylinder_zones", CylinderZones, {"count": 12, "radius": 0.4}),),
    2: (
        ("cylinder_zones", CylinderZones, {"count": 8, "radius": 0.4}),
        ("cylinder_pillars", CylinderPillars, {"count": 8, "radius": 0.3, "height": 0.4}),
    ),
    3: (
        ("cube_zones", CubeZones, {"count": 6, "half": 0.3}),
        ("cylinder_zones", CylinderZones, {"count": 6, "radius": 0.35}),
        ("cube_pillars", CubePillars, {"count": 4, "half": 0.25, "height": 0.5}),
        ("cylinder_pillars", CylinderPillars, {"count": 4, "radius": 0.25, "height": 0.4}),
    ),
}
"""The hazards each level places: (label, placeable class, its keyword arguments)."""


class Goal(NavigationSuite):
    """Reach the goal; ``r = α_dist (d_{t−1} − d_t) + α_goal · n_reached``.

    Observation: body obs, goal lidar, hazard lidar, goal compass and compasses to the 8 nearest
    hazards (Point: 12 + 16 + 16 + 2 + 16 = 62); the walls count as hazards for the hazard lidar
    and compasses (their points nearest the agent). Costs: ``cost/<zone label>`` for each group of
    zones (proximity) and ``cost/contact`` for pillars and walls. Hazards by level: :data:`HAZARDS`.

    Args:
      body: a navigation body.
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Goal"
    params = {
        "goal_radius": Param(valid=POSITIVE, doc="radius of the goal zone (m)", levels={1: 0.20, 2: 0.18, 3: 0.16}),
        "alpha_dist": Param(1.0, REAL, "weight α_dist of the distance progress"),
        "reward_goal": Param(1.0, REAL, "reward α_goal per goal reached"),
        **NAVIGATION_PARAMS,
        **ARENA_PARAMS,
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        hazards = {label: cls(**kwargs) for label, cls, kwargs in HAZARDS[level]}
        self._setup(body, level, hazards, {"goal": GoalZone(v.goal_radius, keepout=0.3)}, v)
        self.goal_radius = TaskParam(jnp.asarray(v.goal_radius, jnp.float32))
        self.alpha_dist = TaskParam(jnp.asarray(v.alpha_dist, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))
        self.sensors = nnx.List([
            self.lidar_for("goal", GROUP_GOAL),
            self.hazard_lidar(),
            self.compass_for("goal"),
            self.hazard_compass(v.hazard_compasses),
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
