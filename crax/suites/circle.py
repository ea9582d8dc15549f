"""Circle: run around a circle about the origin without leaving the boundaries (docs/SPEC.md section 3)."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, REAL, Param, Range, TaskParam
from crax.costs.bounds import OutOfBounds
from crax.objects.zones import CylinderZones
from crax.sensors.lidar import CircleLidar
from crax.suites.base import Transition
from crax.suites.navigation import NAVIGATION_PARAMS, NavigationSuite


@dataclasses.dataclass(frozen=True)
class CircleLevel:
    """What one difficulty level of Circle places: hazard zones and their radius."""

    hazards: int
    hazard_radius: float


LEVELS: dict[int, CircleLevel] = {1: CircleLevel(0, 0.0), 2: CircleLevel(1, 0.15), 3: CircleLevel(2, 0.2)}

BOUND = Range(0.0, lo_open=True, allow_inf=True)
"""A boundary: any distance > 0, or inf for none."""

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
      level: 1, 2 or 3 (hazard zones: :data:`LEVELS`).
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Circle"
    params = {
        "circle_radius": Param(1.5, POSITIVE, "radius R of the circle (m); hazards are placed in ±R"),
        "reward_scale": Param(0.1, REAL, "the 0.1 in the reward"),
        "boundary_cost": Param(1.0, NON_NEGATIVE, "cost per step outside the boundaries"),
        "x_bound": Param(valid=BOUND, doc="boundary |x| (m; inf: none)", levels={1: 1.125, 2: 1.05, 3: 0.975}),
        "y_bound": Param(valid=BOUND, doc="boundary |y| (m; inf or None: none)", levels={1: None, 2: 1.05, 3: 0.975}),
        "circle_lidar_max_dist": Param(6.0, POSITIVE, "range of the circle lidar (m)"),
        "start_extent": Param(0.8, NON_NEGATIVE, "half-width of the agent's start square (m)"),
        **NAVIGATION_PARAMS,
        "lidar": dataclasses.replace(NAVIGATION_PARAMS["lidar"],
                                     doc="hazard lidar kind: pseudo or natural (the circle lidar is analytic)"),
        "hazard_compasses": dataclasses.replace(NAVIGATION_PARAMS["hazard_compasses"],
                                                doc="compasses to the hazards (at most as many as the level has)"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        spec = LEVELS[level]
        hazards = {}
        if spec.hazards:
            hazards["cylinder_zones"] = CylinderZones(spec.hazards, spec.hazard_radius)
        self._setup(body, level, hazards, {}, v, extent=v.circle_radius, agent_extent=v.start_extent)
        self.x_bound = v.x_bound
        self.y_bound = v.y_bound
        self.constraints.append(OutOfBounds(self.x_bound, self.y_bound, boundary_cost=v.boundary_cost))
        self.circle_radius = TaskParam(jnp.asarray(v.circle_radius, jnp.float32))
        self.reward_scale = TaskParam(jnp.asarray(v.reward_scale, jnp.float32))
        sensors = [CircleLidar(v.circle_radius, num_bins=v.lidar_bins, max_dist=v.circle_lidar_max_dist)]
        if spec.hazards:
            sensors += [self.hazard_lidar(), self.hazard_compass(min(v.hazard_compasses, spec.hazards))]
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
