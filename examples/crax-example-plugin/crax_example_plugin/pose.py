"""Pose: a sensor that any task takes by name, extending its observation.

``crax.make("PointGoal1", sensors={"Pose": {"scale": 3.0}})`` or
``crax train ppo-lag --env PointGoal1 --sensor pose:scale=3``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.params import POSITIVE
from crax.sensors import Context, Sensor


class Pose(Sensor):
    """The agent's position on the plane divided by ``scale`` (2) and its heading as
    (cos yaw, sin yaw) (2): 4 floats. Fits every body.

    Args:
      scale: the distance that reads as 1.
    """

    name = "Pose"
    params = {"scale": POSITIVE}
    size = 4

    def __init__(self, *, scale: float = 1.0):
        self.scale = scale

    def observe(self, ctx: Context) -> jax.Array:
        yaw = ctx.agent_yaw
        return jnp.concatenate([ctx.agent_xy / self.scale, jnp.stack([jnp.cos(yaw), jnp.sin(yaw)])])
