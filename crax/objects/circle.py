"""Safety-Gymnasium's circle: the disc whose rim its Circle task has the agent run along."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.core.scene import no_collision

CIRCLE_RGBA = (0.0, 1.0, 0.0, 0.1)
"""Safety-Gymnasium's circle colour at its alpha (green, nearly transparent)."""


class CircleZone(nnx.Module):
    """Safety-Gymnasium 1.0.0's ``Circle`` (``assets/geoms/circle.py``): a flat disc of ``radius``
    (half-height 0.01, centred 0.01 m up) about ``centre``, colliding with nothing.

    It is lidar-observed, and what the lidar sees is its centre, not its rim: Safety-Gymnasium's
    pseudo-lidar reads an object's ``pos``, which for the circle is the origin. :meth:`points` is
    that one point, the task entry the circle's :class:`~crax.sensors.lidar.Lidar` reads.

    Args:
      radius: the disc's radius (m; Safety-Gymnasium: 1.5, the radius its reward is shaped about).
      centre: its centre on the floor (Safety-Gymnasium: the origin).
    """

    name = "CircleZone"
    half_height = 0.01

    def __init__(self, radius: float = 1.5, centre: tuple[float, float] = (0.0, 0.0)):
        self.radius = float(radius)
        self.centre = (float(centre[0]), float(centre[1]))

    def build(self, spec: mujoco.MjSpec, label: str = "circle") -> None:
        """Adds the disc, visual only, as the world body's geom ``label``."""
        g = spec.worldbody.add_geom(name=label, type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                                    size=[self.radius, self.half_height, 0.0],
                                    pos=[*self.centre, self.half_height], rgba=list(CIRCLE_RGBA))
        no_collision(g)  # group 0: no crax lidar casts against it

    def points(self) -> jax.Array:
        """What its lidar observes, shape (1, 2): the centre."""
        return jnp.asarray([self.centre], jnp.float32)
