"""Compass: the ego-frame unit vector towards objects of a class."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.sensors.base import Context, Sensor
from crax.sensors.lidar import ego_frame


class Compass(Sensor):
    """Unit vectors (2 each) towards the ``count`` nearest objects ``task[target]``.

    Ordered by distance, nearest first; zero-padded when the class has fewer objects.
    """

    name = "Compass"

    def __init__(self, target: str, *, count: int = 1):
        self.target = target
        self.count = count
        self.size = 2 * count

    def observe(self, ctx: Context) -> jax.Array:
        ego = ego_frame(ctx.agent_xy, ctx.agent_yaw, ctx.task[self.target])
        dist = jnp.linalg.norm(ego, axis=-1)
        unit = ego / jnp.maximum(dist, 1e-6)[:, None]
        k = min(self.count, ego.shape[0])
        if k < ego.shape[0]:
            _, nearest = jax.lax.top_k(-dist, k)
            unit = unit[nearest]
        else:
            unit = unit[jnp.argsort(dist)]
        pad = jnp.zeros((self.count - k, 2), unit.dtype)
        return jnp.concatenate([unit, pad]).reshape(-1)
