"""Pathway hazards: flat zones strung along +x, placed along +x (their costs: crax.costs.foot_zones, crax.costs.events)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core import palette
from crax.core.params import TaskParam
from crax.core.scene import Category, add_mocap
from crax.objects.base import Placeable

_FLAT = 0.005  # half height of a floor zone

class PathwayZones(Placeable):
    """``count`` flat, non-collidable zones along +x: even indices discs, odd indices squares.

    Zone ``i`` has size ``r_i``: ``radius`` for a disc, the half side ``half`` for an axis-aligned
    square. Its *falloff* at a point at distance ``d`` is ``max(0, 1 − d/r_i)²``, with d the planar
    Euclidean distance for a disc and the Chebyshev distance ``max(|dx|, |dy|)`` for a square, so
    a square's cost is positive exactly on the square that is drawn (a pyramid, 1 at the centre,
    0 on the edges) rather than on its inscribed disc.

    Layout (:meth:`sample`, fresh at every reset): the first zone at x ~ U(``first``), then gaps
    ~ U(``min_gap``, ``max_gap``), each zone at a lateral offset y ~ U(±``lateral``).

    Only ``rendered`` zones are mocap bodies (visual, no collision): the window of consecutive
    zones around the agent (:meth:`window`), moved along as it runs. Costs and sensors read all
    ``count`` positions from the task state. MJX computes the kinematics of every body at every
    substep, so 100 mocap bodies would halve the physics throughput of a HalfCheetah for drawing
    alone; ``rendered=count`` draws them all anyway.

    Args:
      count: number of zones (static).
      radius: disc radius.
      half: square half side.
      max_gap: largest gap between consecutive zone centres (a :class:`TaskParam`: a curriculum
        may change it without recompiling).
      min_gap: smallest gap.
      first: range of the first zone's x.
      lateral: half range of the lateral offset.
      rendered: number of zones drawn as mocap bodies (at most ``count``).
    """

    name = "PathwayZones"
    rgba = palette.PATHWAY_ZONE

    def __init__(
        self,
        count: int = 100,
        radius: float = 0.25,
        half: float = 0.2,
        *,
        max_gap: float = 6.0,
        min_gap: float = 1.0,
        first: tuple[float, float] = (1.0, 2.0),
        lateral: float = 0.25,
        rendered: int = 10,
    ):
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        if rendered < 1:
            raise ValueError(f"rendered must be >= 1, got {rendered}")
        if not 0 < min_gap <= max_gap:
            raise ValueError(f"need 0 < min_gap <= max_gap, got min_gap={min_gap}, max_gap={max_gap}")
        self.count = count
        self.radius = radius
        self.half = half
        self.keepout = max(radius, half * 2**0.5)
        self.z = _FLAT
        self.max_gap = TaskParam(jnp.asarray(max_gap, jnp.float32))
        self.min_gap = min_gap
        self.first = tuple(first)
        self.lateral = lateral
        self.rendered = min(rendered, count)
        self.square = tuple(i % 2 == 1 for i in range(count))
        self.sizes = tuple(half if sq else radius for sq in self.square)

    def zone_geom(self, i: int) -> dict:
        if self.square[i]:
            return {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": [self.half, self.half, _FLAT]}
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, _FLAT, 0]}

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        """``rendered`` mocap bodies ``<label>/<j>``, shaped like zone j (discs and squares alternate)."""
        self.label = label
        for j in range(self.rendered):
            geom = {**self.zone_geom(j), "group": self.group, "rgba": list(self.rgba)}
            add_mocap(spec, f"{label}/{j}", geom, Category.HAZARD if self.collidable else None)

    def bind(self, m: mujoco.MjModel) -> None:
        # Placeable binds `count` copies; only the `rendered` ones exist as bodies.
        count, self.count = self.count, self.rendered
        try:
            super().bind(m)
        finally:
            self.count = count

    def window(self, xy: jax.Array, x: jax.Array) -> jax.Array:
        """Positions (rendered, 2) of the drawn zones for an agent at ``x``: the consecutive zones
        ``i0 … i0 + rendered − 1`` around it, ``i0`` even so that mocap j keeps the shape of zone
        ``i0 + j``. ``xy`` must be sorted by x (as :meth:`sample` makes it)."""
        if self.rendered == self.count:
            return xy
        behind = jnp.sum(xy[:, 0] < x)
        i0 = jnp.clip(behind - self.rendered // 2, 0, self.count - self.rendered)
        return jax.lax.dynamic_slice_in_dim(xy, i0 - i0 % 2, self.rendered)

    def sample(self, key: jax.Array) -> jax.Array:
        """A fresh layout: zone centres (count, 2)."""
        k0, kg, ky = jax.random.split(key, 3)
        x0 = jax.random.uniform(k0, (), minval=self.first[0], maxval=self.first[1])
        gaps = jax.random.uniform(kg, (self.count - 1,), minval=self.min_gap, maxval=self.max_gap[...])
        x = x0 + jnp.concatenate([jnp.zeros(1), jnp.cumsum(gaps)])
        y = jax.random.uniform(ky, (self.count,), minval=-self.lateral, maxval=self.lateral)
        return jnp.stack([x, y], axis=-1)

    def falloff(self, points: jax.Array, xy: jax.Array) -> jax.Array:
        """``max(0, 1 − d/r_i)²`` of every zone (rows) at every point (columns): (count, k)."""
        delta = points[None, :, :] - xy[:, None, :]
        euclid = jnp.sqrt(jnp.sum(jnp.square(delta), axis=-1))
        chebyshev = jnp.max(jnp.abs(delta), axis=-1)
        d = jnp.where(np.asarray(self.square)[:, None], chebyshev, euclid)
        return jnp.square(jnp.maximum(0.0, 1.0 - d / np.asarray(self.sizes, np.float32)[:, None]))
