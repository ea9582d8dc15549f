"""Circle: run around a circle about the origin without leaving the boundaries (docs/SPEC.md section 3)."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, REAL, Range, TaskParam
from crax.costs.bounds import OutOfBounds
from crax.objects.zones import CylinderZones
from crax.sensors.lidar import CircleLidar
from crax.suites.base import Transition
from crax.suites.navigation import NAVIGATION_PARAMS, NavigationSuite


@dataclasses.dataclass(frozen=True)
class CircleLevel:
    """One difficulty level of Circle: boundaries (None: none on that axis) and hazard zones."""

    x_bound: float | None
    y_bound: float | None
    hazards: int
    hazard_radius: float


LEVELS: dict[int, CircleLevel] = {
    1: CircleLevel(1.125, None, 0, 0.0),
    2: CircleLevel(1.05, 1.05, 1, 0.15),
    3: CircleLevel(0.975, 0.975, 2, 0.2),
}

_MARKER_RGBA = (0.2, 0.9, 0.3, 0.25)


class Circle(NavigationSuite):
    """Orbit the origin counter-clockwise at ``circle_radius``; ``r = 0.1 · v_tan / (1 + |ρ − R|)``.

    ``v_tan = (−u·y + v·x) / ρ`` with (u, v) the torso's planar world velocity at the end of the step
    (:meth:`Body.velocity`, as Safety-Gymnasium reads the agent's velocity; DECISIONS 42) and (x, y),
    ρ its position and distance from the origin after the step. No walls: the cost is
    ``boundary_cost · 1[|x| > x_bound ∨ |y| > y_bound]`` (``cost/boundary``) plus the hazard zones'
    proximity cost (``cost/cylinder_zones``, levels 2 and 3). The agent starts uniform in
    ``±start_extent`` with a random yaw; hazards are placed in ``±circle_radius``.

    Observation: body obs, the 16-bin analytic circle lidar (range 6), and, at levels with
    hazards, the hazard lidar and compasses to the hazards (Point level 1: 12 + 16 = 28;
    level 2: 28 + 16 + 2 = 46; level 3: 28 + 16 + 4 = 48). The boundaries are drawn as visual-only
    markers.

    Args:
      body: a navigation body.
      level: 1, 2 or 3.
      circle_radius: R.
      reward_scale: the 0.1 in the reward.
      boundary_cost: cost per step outside the boundaries.
      x_bound, y_bound: override the level's boundaries (``float("inf")``: none).
      cost_scale: weight of zone costs.
      lidar: ``pseudo`` or ``natural`` for the hazard lidar (the circle lidar is analytic).
      lidar_bins, lidar_max_dist: hazard lidar resolution and range.
      circle_lidar_max_dist: range of the circle lidar.
      hazard_compasses: at most this many hazard compasses.
      start_extent: the agent's start square half-width.
      num_candidates: layout candidates per object.
    """

    name = "Circle"
    params = {
        **NAVIGATION_PARAMS,
        "circle_radius": POSITIVE,
        "reward_scale": REAL,
        "boundary_cost": NON_NEGATIVE,
        "x_bound": Range(0.0, lo_open=True, allow_inf=True),
        "y_bound": Range(0.0, lo_open=True, allow_inf=True),
        "circle_lidar_max_dist": POSITIVE,
        "start_extent": NON_NEGATIVE,
    }

    @classmethod
    def level_params(cls, level: int) -> dict[str, Any]:
        spec = LEVELS[level]
        return {k: v for k, v in (("x_bound", spec.x_bound), ("y_bound", spec.y_bound)) if v is not None}

    def __init__(
        self,
        body: Body,
        level: int,
        *,
        circle_radius: float = 1.5,
        reward_scale: float = 0.1,
        boundary_cost: float = 1.0,
        x_bound: float | None = None,
        y_bound: float | None = None,
        cost_scale: float = 2.0,
        lidar: Literal["pseudo", "natural"] = "pseudo",
        lidar_bins: int = 16,
        lidar_max_dist: float = 3.0,
        circle_lidar_max_dist: float = 6.0,
        hazard_compasses: int = 8,
        start_extent: float = 0.8,
        num_candidates: int = 64,
    ):
        spec = LEVELS[level]
        hazards = {}
        if spec.hazards:
            hazards["cylinder_zones"] = CylinderZones(spec.hazards, spec.hazard_radius)
        self._setup(
            body, level, hazards, {},
            cost_scale=cost_scale, collision_cost=0.0, lidar=lidar, lidar_bins=lidar_bins,
            lidar_max_dist=lidar_max_dist, extent=circle_radius, wall_extent=None, num_candidates=num_candidates,
            agent_extent=start_extent,
        )
        self.x_bound = spec.x_bound if x_bound is None else x_bound
        self.y_bound = spec.y_bound if y_bound is None else y_bound
        self.constraints.append(OutOfBounds(self.x_bound, self.y_bound, boundary_cost=boundary_cost))
        self.circle_radius = TaskParam(jnp.asarray(circle_radius, jnp.float32))
        self.reward_scale = TaskParam(jnp.asarray(reward_scale, jnp.float32))
        sensors = [CircleLidar(circle_radius, num_bins=lidar_bins, max_dist=circle_lidar_max_dist)]
        if spec.hazards:
            sensors += [self.hazard_lidar(), self.hazard_compass(min(hazard_compasses, spec.hazards))]
        self.sensors = nnx.List(sensors)

    def build(self, spec: mujoco.MjSpec) -> None:
        super().build(spec)
        radius = float(self.circle_radius[...])
        track = spec.worldbody.add_geom(
            name="circle", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[radius, 0.002, 0],
            pos=[0, 0, 0.002], rgba=list(_MARKER_RGBA),
        )
        track.contype = track.conaffinity = 0
        span = radius + 0.5
        for axis, bound in ((0, self.x_bound), (1, self.y_bound)):
            if bound is None or not bound < float("inf"):
                continue
            for sign in (1, -1):
                pos = [0.0, 0.0, 0.05]
                pos[axis] = sign * bound
                size = [span, span, 0.05]
                size[axis] = 0.01
                g = spec.worldbody.add_geom(
                    name=f"boundary_{'xy'[axis]}{'+' if sign > 0 else '-'}", type=mujoco.mjtGeom.mjGEOM_BOX,
                    size=size, pos=pos, rgba=[0.9, 0.7, 0.2, 0.3],
                )
                g.contype = g.conaffinity = 0

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        return self.sample_start(data, key)

    def transition(self, model, before, data, task, action):
        xy = self.body.position(data)[:2]
        u, v = self.body.velocity(model, data)[:2]
        rho = jnp.linalg.norm(xy)
        v_tan = (-u * xy[1] + v * xy[0]) / jnp.maximum(rho, 1e-6)
        reward = self.reward_scale[...] * v_tan / (1.0 + jnp.abs(rho - self.circle_radius[...]))
        return data, Transition(
            task=task, rewards={"circle": reward}, reward=reward, terminated=~self.body.healthy(data),
            extra_metrics={"tangential_velocity": v_tan, "radius": rho},
        )
