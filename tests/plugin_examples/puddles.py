"""Puddles: a placeable hazard, flat discs that a suite scatters over the floor each episode."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.objects import Placeable


class Puddles(Placeable):
    """``count`` discs of ``radius`` on the floor, visual only (``collidable`` False: no contact);
    each costs 1 while the agent's centre is on it (:meth:`cost`, summed by a HazardProximity term).

    Args:
      count: number of puddles.
      radius: their radius (m), also their placement clearance.
    """

    name = "Puddles"
    rgba = (0.3, 0.5, 0.9, 0.5)

    def __init__(self, count: int, radius: float = 0.3):
        self.count = count
        self.radius = radius
        self.keepout = radius
        self.z = 0.005

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, 0.005, 0]}

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        return (jnp.linalg.norm(xy - agent_xy, axis=-1) < self.radius).astype(jnp.float32)
