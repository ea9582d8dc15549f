"""Beacon: a sensor that adds a marker to the scene and reports where it is, seen from the agent."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.params import REAL
from crax.sensors import Context, Sensor


class Beacon(Sensor):
    """The vector from the agent to a marker at (x, y), in the agent's frame (ahead, left): 2 floats.
    Fits every body.

    Args:
      x, y: where the marker stands (m).
    """

    name = "Beacon"
    params = {"x": REAL, "y": REAL}
    size = 2

    def __init__(self, *, x: float = 0.0, y: float = 0.0):
        self.xy = (float(x), float(y))

    def build(self, spec: mujoco.MjSpec) -> None:
        # a site: no collision, nothing to categorize (a collidable geom would need collide_as)
        spec.worldbody.add_site(name="beacon", pos=[*self.xy, 0.3], size=[0.05, 0, 0], rgba=[1, 0.8, 0, 1])

    def bind(self, m: mujoco.MjModel) -> None:
        self.site_id = int(m.site("beacon").id)

    def observe(self, ctx: Context) -> jax.Array:
        d = ctx.data.site_xpos[self.site_id, :2] - ctx.agent_xy
        c, s = jnp.cos(ctx.agent_yaw), jnp.sin(ctx.agent_yaw)
        return jnp.stack([c * d[0] + s * d[1], -s * d[0] + c * d[1]])
