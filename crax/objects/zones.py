"""Non-collidable zones on the floor (proximity-cost hazards) and the goal zone."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core import palette
from crax.core.scene import GROUP_GOAL
from crax.objects.base import Placeable

_FLAT = 0.005  # half height of a floor zone


class CylinderZones(Placeable):
    """Circular zones of ``radius``: cost ``cost_scale · max(0, 1 − d / r)`` inside (docs/SPEC.md section 3)."""

    name = "CylinderZones"

    def __init__(self, count: int, radius: float, *, keepout: float | None = None):
        self.count = count
        self.radius = radius
        self.keepout = radius if keepout is None else keepout
        self.z = _FLAT

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, _FLAT, 0]}

    def ray_proxy(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_ELLIPSOID, "size": [self.radius, self.radius, 2 * _FLAT]}

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        d = jnp.linalg.norm(xy - agent_xy, axis=-1)
        return jnp.maximum(0.0, 1.0 - d / self.radius)


class CubeZones(Placeable):
    """Axis-aligned square zones of half-size ``half``: cost ``cost_scale`` inside (docs/SPEC.md section 3)."""

    name = "CubeZones"

    def __init__(self, count: int, half: float, *, keepout: float | None = None):
        self.count = count
        self.half = half
        self.keepout = half * 2**0.5 if keepout is None else keepout
        self.z = _FLAT

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": [self.half, self.half, _FLAT]}

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        inside = jnp.all(jnp.abs(xy - agent_xy) <= self.half, axis=-1)
        return inside.astype(jnp.float32)


class GoalZone(CylinderZones):
    """The goal: a green disc of ``radius``, reached when the agent centre is within it."""

    name = "GoalZone"
    group = GROUP_GOAL
    rgba = palette.GOAL

    def __init__(self, radius: float, *, keepout: float | None = None):
        super().__init__(1, radius, keepout=keepout)

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        return jnp.zeros(xy.shape[0], jnp.float32)
