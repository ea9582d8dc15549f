"""Flat zones that alternate circles and squares (Reach's workspace hazards)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.scene import add_mocap
from crax.objects.base import Placeable
from crax.objects.zones import _FLAT


class MixedZones(Placeable):
    """``count`` flat, non-collidable zones: even indices are circles of ``radius``, odd ones
    axis-aligned squares of half-size ``half``.

    :meth:`contains` tells which zones hold which points; :meth:`cost` is its indicator for a
    single agent point. Each zone keeps out its circumradius (``keepouts``); ``keepout`` is the
    largest of them.
    """

    name = "MixedZones"

    def __init__(self, count: int, radius: float, half: float):
        if count < 0:
            raise ValueError(f"MixedZones count must be >= 0, got {count}")
        self.count = count
        self.radius = radius
        self.half = half
        self.is_circle = tuple(i % 2 == 0 for i in range(count))
        self.keepouts = tuple(radius if c else half * 2**0.5 for c in self.is_circle)
        self.keepout = max(self.keepouts, default=0.0)
        self.z = _FLAT

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        circle = {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, _FLAT, 0]}
        square = {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": [self.half, self.half, _FLAT]}
        for i, is_circle in enumerate(self.is_circle):
            geom = {**(circle if is_circle else square), "group": self.group, "rgba": list(self.rgba)}
            add_mocap(spec, f"{label}/{i}", geom, None)

    def contains(self, points: jax.Array, xy: jax.Array) -> jax.Array:
        """(count, P) booleans: zone i (centre ``xy[i]``) holds point j of ``points`` (P, 2); edges count."""
        rel = points[None, :, :] - xy[:, None, :]
        in_circle = jnp.sum(jnp.square(rel), axis=-1) <= self.radius**2
        in_square = jnp.all(jnp.abs(rel) <= self.half, axis=-1)
        return jnp.where(jnp.asarray(self.is_circle, bool)[:, None], in_circle, in_square)

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        return self.contains(agent_xy[None, :], xy)[:, 0].astype(jnp.float32)
