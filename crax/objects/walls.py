"""The arena's outer walls as sensed objects: the hazard lidar and compasses see them, where the paper
is silent (docs/SPEC.md section 7, decision 54)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

WALL_NAMES = ("wall_east", "wall_west", "wall_north", "wall_south")
"""Geom names of the four walls (``crax.core.scene.add_walls``), in the order of :func:`wall_points`."""


def wall_points(xy: jax.Array, extent: float) -> jax.Array:
    """The point of each wall (east, west, north, south) nearest to ``xy``, shape (4, 2).

    Walls stand at ``x = ±extent`` and ``y = ±extent``, each spanning the arena's side; the
    nearest point is the foot of the perpendicular, clipped to the wall's span.
    """
    x, y = jnp.clip(xy[0], -extent, extent), jnp.clip(xy[1], -extent, extent)
    e = jnp.asarray(extent, xy.dtype)
    return jnp.stack([jnp.stack([e, y]), jnp.stack([-e, y]), jnp.stack([x, e]), jnp.stack([x, -e])])
