"""Button's buttons (collidable spheres pressed by touching them) and gremlins (moving boxes)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core import palette
from crax.core.scene import GROUP_GOAL
from crax.objects.base import Placeable
from crax.objects.pillars import FRICTIONLESS

_RAY_HEIGHT = 0.005  # the natural lidar's ray height (crax.sensors.NaturalLidar)


class Buttons(Placeable):
    """``count`` spheres of ``radius`` resting on the floor; an agent presses one by touching it.

    They collide with the agent only (the hazard collision category), cost nothing by themselves
    and belong to the goal geom group. A flat ray-only ellipsoid at ray height gives the natural
    lidar the sphere's full radius (the sphere itself is only ``√(r² − (r − h)²)`` wide there).
    """

    name = "Buttons"
    collidable = True
    group = GROUP_GOAL
    rgba = palette.BUTTON

    def __init__(self, count: int = 4, radius: float = 0.1, *, keepout: float = 0.2):
        self.count = count
        self.radius = radius
        self.keepout = keepout
        self.z = radius

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_SPHERE, "size": [self.radius, 0, 0], **FRICTIONLESS}

    def ray_proxy(self) -> dict:
        return {
            "type": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
            "size": [self.radius, self.radius, 0.01],
            "pos": [0.0, 0.0, _RAY_HEIGHT - self.z],
        }


class Gremlins(Placeable):
    """Collidable boxes (half-size ``half``) circling their anchors: ``anchor + travel·(sin φ, cos φ)``.

    The layout places the anchors (keep-out ``travel + 0.1`` covers the orbit); the suite moves
    the mocap bodies every step with :meth:`positions`. Contact with the agent costs like any
    collidable hazard, and they are in the hazard geom group (seen by the natural hazard lidar).
    """

    name = "Gremlins"
    collidable = True
    rgba = palette.GREMLIN

    def __init__(self, count: int, travel: float, *, half: float = 0.1, keepout: float | None = None):
        self.count = count
        self.travel = travel
        self.half = half
        self.keepout = travel + 0.1 if keepout is None else keepout
        self.z = half

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": [self.half] * 3, **FRICTIONLESS}

    def positions(self, anchors: jax.Array, phase: jax.Array) -> jax.Array:
        """Positions (count, 2) at phase φ (the time since the episode began, in seconds)."""
        return anchors + self.travel * jnp.stack([jnp.sin(phase), jnp.cos(phase)])
