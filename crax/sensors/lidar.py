"""Lidars over one object class: the pseudo-lidar (default) and a ray-cast natural lidar."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.context import Context
from crax.core.mjx import mjx
from crax.sensors.base import Sensor


def ego_frame(xy: jax.Array, yaw: jax.Array, points: jax.Array) -> jax.Array:
    """World-frame points (k, 2) seen from ``xy`` with heading ``yaw`` (rotation by −yaw)."""
    rel = points - xy
    c, s = jnp.cos(yaw), jnp.sin(yaw)
    return jnp.stack([c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1]], axis=-1)


RANKED = 32
"""The most entries :func:`nearest` ranks by pairs (m² comparisons); above it, ``lax.top_k``."""


def nearest(dist: jax.Array, k: int) -> jax.Array:
    """Indices of the ``k`` smallest entries of ``dist`` (m,), smallest first, equal ones in index order:
    ``lax.top_k(-dist, k)``'s and ``argsort(dist)[:k]``'s. Up to :data:`RANKED` entries they are ranked
    by comparing every pair, which fuses with the sensor's other arithmetic; XLA's CPU ``top_k`` is a
    library call of its own per batch, a large share of PointGoal1's hazard compass, and its sort slower
    still."""
    m = dist.shape[-1]
    if m > RANKED:
        return jax.lax.top_k(-dist, k)[1]
    i = jnp.arange(m)
    ahead = (dist[None, :] < dist[:, None]) | ((dist[None, :] == dist[:, None]) & (i[None, :] < i[:, None]))
    rank = jnp.sum(ahead, axis=1)
    return jnp.sum(jnp.where(rank[None, :] == jnp.arange(k)[:, None], i[None, :], 0), axis=1)


def body_frame(pos: jax.Array, rot: jax.Array, points: jax.Array) -> jax.Array:
    """Floor points (k, 2), at height 0, in the frame of a body at ``pos`` (3,) turned by ``rot``
    (3, 3; body to world), its first two coordinates: Safety-Gymnasium's ``_ego_xy``. For a level
    body this is :func:`ego_frame`; a tilted one's roll, pitch and height move the points."""
    rel = jnp.concatenate([points, jnp.zeros_like(points[:, :1])], axis=-1) - pos
    return (rel @ rot)[:, :2]


def pseudo_lidar(
    xy: jax.Array, yaw: jax.Array, points: jax.Array, *, num_bins: int, max_dist: float, alias: bool = True
) -> jax.Array:
    """Safety-Gym's pseudo-lidar over object centres, vectorized over objects (docs/SPEC.md section 4).

    Each object lands in bin ``floor(θ / (2π/B))`` of its ego-frame angle θ ∈ [0, 2π) with reading
    ``max(0, D − d) / D``; with aliasing the next bin gets ``α·reading`` and the previous one
    ``(1 − α)·reading``, α being the fractional position in the bin. Bins combine by max.

    The ego-frame angle is the world-frame angle less ``yaw`` (no rotation of the points: XLA's CPU
    code recomputed a rotation's cos and sin of the yaw in every fusion that read the points).
    """
    rel = points - xy
    return _bins(jnp.linalg.norm(rel, axis=-1), atan2(rel[:, 1], rel[:, 0]) - yaw, num_bins=num_bins,
                 max_dist=max_dist, alias=alias)


_TAN_PI_8 = 0.41421356237309503


def atan2(y: jax.Array, x: jax.Array) -> jax.Array:
    """``arctan2(y, x)`` in float32 within 3 ulp, exact on the axes and the diagonals (0, ±π/4, ±π/2,
    ±3π/4, π). XLA's CPU code calls a library function per element for ``jnp.arctan2`` (27 ns an
    element inside PointGoal1's step, its lidars' largest kernel); this is arithmetic that vectorises.
    Cephes' ``atanf``: the ratio of the smaller to the larger magnitude, above tan(π/8) taken about 1
    (π/4 + atan((t − 1)/(t + 1))), its odd polynomial, then the octant's reflections."""
    ax, ay = jnp.abs(x), jnp.abs(y)
    big, small = jnp.maximum(ax, ay), jnp.minimum(ax, ay)
    t = small / jnp.where(big == 0, 1.0, big)
    high = t > _TAN_PI_8
    u = jnp.where(high, (t - 1.0) / (t + 1.0), t)
    z = u * u
    p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * u + u
    r = jnp.where(high, np.float32(np.pi / 4) + p, p)
    r = jnp.where(ay > ax, np.float32(np.pi / 2) - r, r)
    r = jnp.where(x < 0, np.float32(np.pi) - r, r)
    return jnp.where(y < 0, -r, r)


def lidar_bins(ego: jax.Array, *, num_bins: int, max_dist: float, alias: bool = True) -> jax.Array:
    """The pseudo-lidar's bins (:func:`pseudo_lidar`) of points already in the ego frame (k, 2)."""
    return _bins(jnp.linalg.norm(ego, axis=-1), atan2(ego[:, 1], ego[:, 0]), num_bins=num_bins, max_dist=max_dist,
                 alias=alias)


def _bins(dist: jax.Array, angle: jax.Array, *, num_bins: int, max_dist: float, alias: bool) -> jax.Array:
    """The pseudo-lidar's bins of points at distances ``dist`` and ego-frame angles ``angle`` in (−2π, 2π)."""
    width = 2 * jnp.pi / num_bins
    # the angle % 2π to the bit, without the remainder: a library call per element on a CPU
    angle = jnp.where(angle < 0, angle + 2 * jnp.pi, angle)
    position = angle / width
    b = jnp.floor(position).astype(jnp.int32) % num_bins
    reading = jnp.maximum(0.0, max_dist - dist) / max_dist
    out = jnp.zeros(num_bins, jnp.float32).at[b].max(reading)
    if alias:
        alpha = position - jnp.floor(position)
        out = out.at[(b + 1) % num_bins].max(alpha * reading)
        out = out.at[(b - 1) % num_bins].max((1.0 - alpha) * reading)
    return out


class LidarBase(Sensor):
    """What every lidar shares: ``num_bins`` readings (its ``size``) around the agent, bin ``k``
    spanning the angles ``[k, k + 1)·2π / num_bins`` counter-clockwise from the heading, and the range
    ``max_dist`` (D): a thing at distance d reads ``max(0, D − d) / D`` (:meth:`reading`)."""

    def __init__(self, num_bins: int, max_dist: float):
        self.size = num_bins
        self.num_bins = num_bins
        self.max_dist = max_dist

    def ray_angles(self) -> tuple[float, ...]:
        """Each bin's centre angle (radians from the heading): where a ray-casting lidar casts its rays."""
        width = 2 * np.pi / self.num_bins
        return tuple(float(a) for a in (np.arange(self.num_bins) + 0.5) * width)

    def reading(self, dist: jax.Array) -> jax.Array:
        """``max(0, D − dist) / D``."""
        return jnp.maximum(0.0, self.max_dist - dist) / self.max_dist


class Lidar(LidarBase):
    """Pseudo-lidar over the positions ``task[target]`` (the default lidar of every suite).

    Args:
      target: task key of the object class (``"goal"``, ``"hazards"``, ...).
      num_bins: angular bins; bin 0 starts at the heading and bins run counter-clockwise.
      max_dist: range D in metres.
      alias: spread each reading over the neighbouring bins.
      nearest: see only the ``nearest`` objects closest to the agent (:func:`nearest`, on static
        shapes; Pathway's 10 of 100 zones); None: every object.
      mask: task key of a scalar that multiplies the reading (0 blanks the lidar, e.g. Button's
        lidar after a press); None: always on.
      tilted: take the ego frame from the torso's full pose (:func:`body_frame`: its height, roll
        and pitch too), as Safety-Gymnasium's lidars do; False: its planar pose (``agent_xy``,
        ``agent_yaw``). The two agree for a body that stays level (the Point).
    """

    name = "Lidar"

    def __init__(
        self,
        target: str,
        *,
        num_bins: int = 16,
        max_dist: float = 3.0,
        alias: bool = True,
        nearest: int | None = None,
        mask: str | None = None,
        tilted: bool = False,
    ):
        if nearest is not None and nearest < 1:
            raise ValueError(f"nearest must be >= 1 or None, got {nearest}")
        super().__init__(num_bins, max_dist)
        self.target = target
        self.alias = alias
        self.nearest = nearest
        self.mask = mask
        self.tilted = tilted

    def bind(self, m: mujoco.MjModel) -> None:
        if self.tilted:
            self.torso_id = int(m.body("agent/torso").id)

    def observe(self, ctx: Context) -> jax.Array:
        return _masked(ctx, self.mask, self._observe(ctx))

    def _observe(self, ctx: Context) -> jax.Array:
        points = ctx.task[self.target]
        if self.nearest is not None and self.nearest < points.shape[0]:
            points = points[nearest(jnp.sum(jnp.square(points - ctx.agent_xy), axis=-1), self.nearest)]
        if self.tilted:
            ego = body_frame(ctx.data.xpos[self.torso_id], ctx.data.xmat[self.torso_id], points)
            return lidar_bins(ego, num_bins=self.num_bins, max_dist=self.max_dist, alias=self.alias)
        return pseudo_lidar(ctx.agent_xy, ctx.agent_yaw, points, num_bins=self.num_bins, max_dist=self.max_dist,
                            alias=self.alias)


class NaturalLidar(LidarBase):
    """Ray-cast lidar (``mjx.ray``) against the geoms of one or more MJCF geom groups.

    One horizontal ray per bin, from the agent at ``height`` along the centre angle of the bin;
    reading ``max(0, D − hit distance) / D`` (0 where nothing is hit within range). Geoms of the
    agent's torso are excluded. MJX casts rays against planes, spheres, capsules, ellipsoids,
    boxes and meshes but not cylinders; crax's cylinder hazards and goals therefore carry a
    ray-only ellipsoid proxy whose cross-section at ray height is the cylinder's disc.

    ``mjx.ray`` reads ``data.geom_xpos``: a suite that moves a mocap body after the physics step
    writes the moved geoms' positions too (see ``NavigationSuite.move``), so the rays see it at
    once.

    Args:
      group: MJCF geom group(s) of the object class (see ``crax.core.scene.GROUP_*``); the hazard
        lidar of a walled arena casts against hazards and walls.
      num_bins, max_dist: as :class:`Lidar`.
      height: ray height above the floor.
      visible: task key of a bool array over the model's geom ids; a ray whose first hit is a geom
        marked False reads 0 (Button's lidar sees only the active button). None: every hit counts.
    """

    name = "NaturalLidar"

    def __init__(
        self,
        group: int | tuple[int, ...],
        *,
        num_bins: int = 16,
        max_dist: float = 3.0,
        height: float = 0.005,
        visible: str | None = None,
    ):
        super().__init__(num_bins, max_dist)
        self.group = (group,) if isinstance(group, int) else tuple(group)
        self.height = height
        self.visible = visible

    def bind(self, m: mujoco.MjModel) -> None:
        self.exclude = int(m.body("agent/torso").id)
        self.geomgroup = tuple(int(g in self.group) for g in range(mujoco.mjNGROUP))

    def observe(self, ctx: Context) -> jax.Array:
        theta = ctx.agent_yaw + jnp.asarray(self.ray_angles())
        dirs = jnp.stack([jnp.cos(theta), jnp.sin(theta), jnp.zeros_like(theta)], axis=-1)
        origin = jnp.concatenate([ctx.agent_xy, jnp.array([self.height])])

        def cast(vec):
            return mjx.ray(ctx.model, ctx.data, origin, vec, self.geomgroup, True, self.exclude)

        dist, geom = jax.vmap(cast)(dirs)
        hit = dist >= 0
        if self.visible is not None:
            hit &= ctx.task[self.visible][jnp.maximum(geom, 0)]
        return jnp.where(hit, self.reading(dist), 0.0)


def ray_circle(origin: jax.Array, dirs: jax.Array, centre: jax.Array, radius: float) -> jax.Array:
    """Distance along each unit ray ``dirs`` (n, 2) from ``origin`` to a circle; inf where it misses.

    The nearest positive root of ``|o + t·d − c|² = R²``: the near root from outside the circle,
    the far root from inside (every ray from inside hits).
    """
    p = origin - centre
    b = dirs @ p
    c = p @ p - radius**2
    disc = b**2 - c
    root = jnp.sqrt(jnp.maximum(disc, 0.0))
    near, far = -b - root, -b + root
    t = jnp.where(near > 0, near, far)
    return jnp.where((disc >= 0) & (t > 0), t, jnp.inf)


class CircleLidar(LidarBase):
    """Analytic lidar of a circle on the floor (Circle's track): ray–circle intersection per bin.

    One ray per bin at the bin's centre angle (as :class:`NaturalLidar`); reading
    ``max(0, D − t) / D`` with t the nearest positive intersection, 0 for rays that miss.

    Args:
      radius: circle radius about ``centre``.
      num_bins, max_dist: bins and range D.
      centre: circle centre on the plane.
    """

    name = "CircleLidar"

    def __init__(
        self, radius: float = 1.5, *, num_bins: int = 16, max_dist: float = 6.0, centre: tuple[float, float] = (0.0, 0.0)
    ):
        super().__init__(num_bins, max_dist)
        self.radius = radius
        self.centre = tuple(centre)

    def observe(self, ctx: Context) -> jax.Array:
        theta = ctx.agent_yaw + jnp.asarray(self.ray_angles())
        dirs = jnp.stack([jnp.cos(theta), jnp.sin(theta)], axis=-1)
        t = ray_circle(ctx.agent_xy, dirs, jnp.asarray(self.centre), self.radius)
        return self.reading(t)  # inf (a miss) reads 0


def _masked(ctx: Context, mask: str | None, out: jax.Array) -> jax.Array:
    return out if mask is None else out * ctx.task[mask].astype(out.dtype)
