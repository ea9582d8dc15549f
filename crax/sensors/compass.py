"""Compass: the ego-frame unit vector towards objects of a class; Distance: how far they are."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.sensors.base import Sensor
from crax.sensors.lidar import ego_frame, nearest


class Compass(Sensor):
    """Unit vectors (2 each) towards the ``count`` nearest objects ``task[target]``.

    Ordered by distance, nearest first; zero-padded when the class has fewer objects. Vectors are
    in the agent's ego frame (rotated by −yaw).

    Args:
      target: task key of the object positions (k, 2).
      count: number of nearest objects.
      origin: task key of a point (1, 2) the vectors start from instead of the agent (Push's
        block→goal compass); still expressed in the agent's ego frame.
      mask: task key of a scalar multiplying the output (0 blanks it).
    """

    name = "Compass"

    def __init__(self, target: str, *, count: int = 1, origin: str | None = None, mask: str | None = None):
        self.target = target
        self.count = count
        self.origin = origin
        self.mask = mask
        self.size = 2 * count

    def observe(self, ctx: Context) -> jax.Array:
        xy = ctx.agent_xy if self.origin is None else ctx.task[self.origin][0]
        ego = ego_frame(xy, ctx.agent_yaw, ctx.task[self.target])
        dist = jnp.linalg.norm(ego, axis=-1)
        unit = ego / jnp.maximum(dist, 1e-6)[:, None]
        k = min(self.count, ego.shape[0])
        unit = unit[nearest(dist, k)]
        pad = jnp.zeros((self.count - k, 2), unit.dtype)
        out = jnp.concatenate([unit, pad]).reshape(-1)
        return out if self.mask is None else out * ctx.task[self.mask].astype(out.dtype)


class Distance(Sensor):
    """Planar distance (1) from the agent (or ``task[origin]``) to the object ``task[target]``, divided by ``scale``.

    Push observes its agent→block and block→goal distances / 3 with two of these.
    """

    name = "Distance"
    size = 1

    def __init__(self, target: str, *, origin: str | None = None, scale: float = 3.0):
        self.target = target
        self.origin = origin
        self.scale = scale

    def observe(self, ctx: Context) -> jax.Array:
        xy = ctx.agent_xy if self.origin is None else ctx.task[self.origin][0]
        return (jnp.linalg.norm(ctx.task[self.target][0] - xy) / self.scale)[None]
