"""Lidars over one object class: the pseudo-lidar (default) and a ray-cast natural lidar."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax._mjx import mjx
from crax.sensors.base import Context, Sensor


def ego_frame(xy: jax.Array, yaw: jax.Array, points: jax.Array) -> jax.Array:
    """World-frame points (k, 2) seen from ``xy`` with heading ``yaw`` (rotation by −yaw)."""
    rel = points - xy
    c, s = jnp.cos(yaw), jnp.sin(yaw)
    return jnp.stack([c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1]], axis=-1)


def pseudo_lidar(
    xy: jax.Array, yaw: jax.Array, points: jax.Array, *, num_bins: int, max_dist: float, alias: bool = True
) -> jax.Array:
    """Safety-Gym's pseudo-lidar over object centres, vectorized over objects (SPEC section 4).

    Each object lands in bin ``floor(θ / (2π/B))`` of its ego-frame angle θ ∈ [0, 2π) with reading
    ``max(0, D − d) / D``; with aliasing the next bin gets ``α·reading`` and the previous one
    ``(1 − α)·reading``, α being the fractional position in the bin. Bins combine by max.
    """
    ego = ego_frame(xy, yaw, points)
    dist = jnp.linalg.norm(ego, axis=-1)
    width = 2 * jnp.pi / num_bins
    angle = jnp.arctan2(ego[:, 1], ego[:, 0]) % (2 * jnp.pi)
    position = angle / width
    b = jnp.floor(position).astype(jnp.int32) % num_bins
    reading = jnp.maximum(0.0, max_dist - dist) / max_dist
    out = jnp.zeros(num_bins, jnp.float32).at[b].max(reading)
    if alias:
        alpha = position - jnp.floor(position)
        out = out.at[(b + 1) % num_bins].max(alpha * reading)
        out = out.at[(b - 1) % num_bins].max((1.0 - alpha) * reading)
    return out


class Lidar(Sensor):
    """Pseudo-lidar over the positions ``task[target]`` (the default lidar of every suite).

    Args:
      target: task key of the object class (``"goal"``, ``"hazards"``, ...).
      num_bins: angular bins; bin 0 starts at the heading and bins run counter-clockwise.
      max_dist: range D in metres.
      alias: spread each reading over the neighbouring bins.
    """

    name = "Lidar"

    def __init__(self, target: str, *, num_bins: int = 16, max_dist: float = 3.0, alias: bool = True):
        self.target = target
        self.size = num_bins
        self.num_bins = num_bins
        self.max_dist = max_dist
        self.alias = alias

    def observe(self, ctx: Context) -> jax.Array:
        return pseudo_lidar(
            ctx.agent_xy, ctx.agent_yaw, ctx.task[self.target],
            num_bins=self.num_bins, max_dist=self.max_dist, alias=self.alias,
        )


class NaturalLidar(Sensor):
    """Ray-cast lidar (``mjx.ray``) against the geoms of one MJCF geom group.

    One horizontal ray per bin, from the agent at ``height`` along the centre angle of the bin;
    reading ``max(0, D − hit distance) / D`` (0 where nothing is hit within range). Geoms of the
    agent's torso are excluded. MJX casts rays against planes, spheres, capsules, ellipsoids,
    boxes and meshes but not cylinders; crax's cylinder hazards and goals therefore carry a
    ray-only ellipsoid proxy whose cross-section at ray height is the cylinder's disc.

    Args:
      group: MJCF geom group of the object class (see ``crax.scene.GROUP_*``).
      num_bins, max_dist: as :class:`Lidar`.
      height: ray height above the floor.
    """

    name = "NaturalLidar"

    def __init__(self, group: int, *, num_bins: int = 16, max_dist: float = 3.0, height: float = 0.005):
        self.group = group
        self.size = num_bins
        self.num_bins = num_bins
        self.max_dist = max_dist
        self.height = height

    def bind(self, m: mujoco.MjModel) -> None:
        self.exclude = int(m.body("agent/torso").id)
        self.geomgroup = tuple(int(g == self.group) for g in range(mujoco.mjNGROUP))
        width = 2 * np.pi / self.num_bins
        self.angles = tuple(float(a) for a in (np.arange(self.num_bins) + 0.5) * width)

    def observe(self, ctx: Context) -> jax.Array:
        theta = ctx.agent_yaw + jnp.asarray(self.angles)
        dirs = jnp.stack([jnp.cos(theta), jnp.sin(theta), jnp.zeros_like(theta)], axis=-1)
        origin = jnp.concatenate([ctx.agent_xy, jnp.array([self.height])])

        def cast(vec):
            return mjx.ray(ctx.model, ctx.data, origin, vec, self.geomgroup, True, self.exclude)[0]

        dist = jax.vmap(cast)(dirs)
        return jnp.where(dist >= 0, jnp.maximum(0.0, self.max_dist - dist) / self.max_dist, 0.0)
