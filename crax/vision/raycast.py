"""A camera image by ray casting: every pixel's ray against every geom in view, pure JAX, jittable
and vmappable.

What a pixel reads (the conventions of MuJoCo's OpenGL renderer where it has one):

- ``depth`` (H, W) float32: z-depth, the hit's distance along the camera's optical axis (not the
  ray's length), as ``mujoco.Renderer`` returns with depth rendering on. A pixel that sees nothing,
  or sees only beyond the far plane, reads the far plane's depth ``camera.zfar * m.stat.extent``
  (MuJoCo's renderer's far value for the same ``zfar``). A surface nearer than the near plane, at
  the depth ``camera.znear * m.stat.extent`` (MuJoCo's renderer's near value), is not seen, and the
  ray sees what lies behind it: the geom whose surface a ray enters that near is left out for that
  ray, as OpenGL clips the near side of a closed geom and draws none of its inside (back faces).
- ``segmentation`` (H, W) int32: the id of the geom seen, -1 where none.
- ``rgb`` (H, W, 3) uint8: the geom's colour lit by a headlight at the camera (Lambertian):
  ``colour * (AMBIENT + DIFFUSE * cos θ)``, θ the angle between the surface's normal and the way
  back along the ray; ``camera.background`` where nothing is seen. The colour is MuJoCo's
  renderer's: the geom's ``rgba``, or its material's when it has one and its own ``rgba`` is the
  default (0.5, 0.5, 0.5, 1). Textures, other lights, shadows and reflections are left out, and
  translucent geoms are drawn opaque.

Which geoms are seen: those the renderer draws, i.e. of a group ``camera.geomgroup`` shows, not on
``camera.bodyexclude``, and whose colour (as above) is not fully transparent; so crax's ray-only
proxies (alpha 0, with a material so that ``mjx.ray`` hits them) stay hidden. Static and mocap
bodies' geoms are seen (the cast reads ``data.geom_xpos`` and ``data.geom_xmat``).

How: the geoms in view are found before tracing, from the model's NumPy arrays
(:func:`visible_geoms`), and posed in the camera's frame; each geom type is then cast against every
ray at once as a (geoms × rays) array (:mod:`crax.vision.intersect`: planes, spheres, capsules,
ellipsoids, cylinders, boxes, and each mesh geom's triangles), with MuJoCo's ``mj_rayGeom``
semantics, and each ray keeps its nearest hit; the surface normal is then found for that hit only.
Meshes are hit on every triangle (two-sided, as ``mjx.ray``; slow for large meshes) and lit by the
face's normal. Height fields and SDF geoms are not seen. Geoms whose transparency is only known at
run time (a model passed into the jitted function) are cast and then hidden; otherwise they are left
out of the cast.

Memory: a cast's largest arrays are (candidate rows × ``camera.rays_per_chunk``) per image; a larger
image is cast in chunks one after another.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.mjx import mjx
from crax.vision import intersect
from crax.vision.camera import Camera

AMBIENT = 0.3
"""Share of a geom's colour a pixel shows whatever the angle it sees the surface at."""
DIFFUSE = 0.7
"""Share added in proportion to cos θ (θ: the angle between the normal and the reversed ray)."""

_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)  # MuJoCo's default geom rgba, which a material overrides


def render(m: mjx.Model, d: mjx.Data, camera: Camera, camera_id: int | jax.Array) -> dict[str, jax.Array]:
    """The images of the model's camera ``camera_id`` in ``d`` (after a forward pass).

    Returns a dict with the outputs ``camera`` asks for: ``"rgb"`` (H, W, 3) uint8, ``"depth"``
    (H, W) float32, ``"segmentation"`` (H, W) int32 (the module docstring says what they read).
    The camera's own ``fovy`` is ``camera.fovy``, not the model's ``cam_fovy``.
    """
    return render_at(m, d, camera, d.cam_xpos[camera_id], d.cam_xmat[camera_id])


def render_at(m: mjx.Model, d: mjx.Data, camera: Camera, pos: jax.Array, xmat: jax.Array) -> dict[str, jax.Array]:
    """The images of a camera at ``pos`` (3,) turned by ``xmat`` (3, 3; camera to world, its columns
    the camera's x right, y up and z backwards in world coordinates), as :func:`render`'s."""
    colours = geom_colours(m)
    seen = visible_geoms(m, camera, colours)
    posed = _in_camera(m, d, seen, pos, xmat)
    shown = None if isinstance(colours, np.ndarray) else jnp.asarray(colours)[seen.ids, 3] != 0
    far = jnp.float32(camera.zfar) * m.stat.extent
    near = jnp.float32(camera.znear) * m.stat.extent if camera.znear > 0 else None
    table = _shading_table(seen, posed) if camera.rgb else None
    kinds = sorted({kind for kind, _ in seen.groups} | ({intersect.MESH} if seen.owners.size else set()))
    row_colours = jnp.asarray(colours)[seen.ids, :3].astype(jnp.float32)
    row_ids = jnp.asarray(seen.ids)

    def cast(start: int | jax.Array, count: int) -> dict[str, jax.Array]:
        """The outputs of pixels ``start`` to ``start + count`` (row by row), flat."""
        dirs = _rays(camera, start, count)
        dist, row = _first_hit(seen, posed, shown, dirs, near)
        depth = dist * -dirs[2]
        hit = jnp.isfinite(dist) & (depth <= far)
        out: dict[str, jax.Array] = {}
        if camera.rgb:
            background = jnp.asarray(camera.background, jnp.float32)
            if table is None:
                rgb = jnp.broadcast_to(background, (count, 3))
            else:  # (count, 3) as made, not a transpose of (3, count): that would repeat the shading per channel
                shade = AMBIENT + DIFFUSE * _facing(kinds, _take_rows(table, row), jnp.where(hit, dist, 0.0), dirs)
                colour = jnp.take(row_colours, row, axis=0, mode="clip")
                rgb = jnp.where(hit[:, None], colour * shade[:, None], background)
            out["rgb"] = jnp.round(jnp.clip(rgb, 0, 1) * 255).astype(jnp.uint8)
        if camera.depth:
            out["depth"] = jnp.where(hit, depth, far).astype(jnp.float32)
        if camera.segmentation:
            geom = jnp.take(row_ids, row, mode="clip") if seen.ids.size else jnp.zeros(count, jnp.int32)
            out["segmentation"] = jnp.where(hit, geom, -1).astype(jnp.int32)
        return out

    n, chunk = camera.height * camera.width, camera.rays_per_chunk
    if n <= chunk:
        out = cast(0, n)
    else:  # whole chunks one after another (a loop: one chunk's arrays at a time), then the rest
        whole = n // chunk * chunk
        out = jax.lax.map(lambda start: cast(start, chunk), jnp.arange(0, whole, chunk, dtype=jnp.int32))
        out = {k: v.reshape(whole, *v.shape[2:]) for k, v in out.items()}
        if whole < n:
            rest = cast(whole, n - whole)
            out = {k: jnp.concatenate([v, rest[k]]) for k, v in out.items()}
    shape = (camera.height, camera.width)
    return {k: v.reshape(*shape, *v.shape[1:]) for k, v in out.items()}


def _rays(camera: Camera, start: int | jax.Array, count: int) -> jax.Array:
    """Unit directions (3, count) of the rays through pixels ``start`` to ``start + count`` (row by
    row), in the camera's frame: :meth:`Camera.rays`, computed here from the pixels' indices (so a
    chunk cast in a loop reads no slice of a table; the arithmetic is IEEE-exact, so a pixel's ray is
    the same in every chunking)."""
    k = start + jnp.arange(count, dtype=jnp.int32)
    half_y = math.tan(math.radians(camera.fovy) / 2)
    half_x = half_y * camera.width / camera.height
    x = ((k % camera.width).astype(jnp.float32) + 0.5) * np.float32(2 / camera.width) - 1
    y = 1 - ((k // camera.width).astype(jnp.float32) + 0.5) * np.float32(2 / camera.height)
    x, y = x * np.float32(half_x), y * np.float32(half_y)
    norm = jnp.sqrt(x * x + y * y + 1)
    return jnp.stack([x / norm, y / norm, -1 / norm])


def geom_colours(m: mjx.Model) -> np.ndarray | jax.Array:
    """Each geom's RGBA (ngeom, 4) as MuJoCo's renderer draws it: its material's where it has a material
    and its own ``rgba`` is the default, else its own. A NumPy array where the model's colours are
    constants (a model closed over by the jitted function), else a traced one."""
    try:
        xp = np
        own, matid, mat = (np.asarray(x) for x in (m.geom_rgba, m.geom_matid, m.mat_rgba))
    except jax.errors.TracerArrayConversionError:  # the model is an argument of a transformed function
        xp = jnp
        own, matid, mat = (jnp.asarray(x) for x in (m.geom_rgba, m.geom_matid, m.mat_rgba))
    own = own.astype(xp.float32)
    if m.nmat == 0:
        return own
    from_material = (matid >= 0) & xp.all(own == xp.asarray(_DEFAULT_RGBA, xp.float32), axis=-1)
    return xp.where(from_material[:, None], mat.astype(xp.float32)[xp.maximum(matid, 0)], own)


@dataclasses.dataclass(frozen=True)
class VisibleGeoms:
    """The geoms a camera may see, found from the model's NumPy arrays when the render is traced.

    Attributes:
      groups: ``(geom type, ids)`` for each primitive type with geoms in view, ids ascending.
      corners: the triangles of the mesh geoms in view, in their geoms' frames (T, 3, 3).
      owners: the geom each triangle belongs to (T,).
    """

    groups: tuple[tuple[int, np.ndarray], ...]
    corners: np.ndarray
    owners: np.ndarray

    @property
    def ids(self) -> np.ndarray:
        """The geom of each candidate row of a cast, in the order :func:`_first_hit` stacks them."""
        return np.concatenate([ids for _, ids in self.groups] + [self.owners]).astype(np.int32)


def visible_geoms(m: mjx.Model, camera: Camera, colours: np.ndarray | jax.Array | None = None) -> VisibleGeoms:
    """The geoms ``camera`` may see in ``m``: of a type it casts against (not height fields or SDFs), of
    a group ``camera.geomgroup`` shows, not on ``camera.bodyexclude``, and, where ``colours`` (as
    :func:`geom_colours`) are known now, not fully transparent. All of it is decided before tracing,
    so a cast's arrays are (rays × these geoms) only."""
    kinds = np.asarray(m.geom_type)
    keep = np.isin(kinds, [*intersect.PRIMITIVES, intersect.MESH])
    excluded = (camera.bodyexclude,) if isinstance(camera.bodyexclude, int) else camera.bodyexclude
    keep &= ~np.isin(np.asarray(m.geom_bodyid), excluded)
    if camera.geomgroup:
        keep &= np.asarray(camera.geomgroup, bool)[np.clip(np.asarray(m.geom_group), 0, mujoco.mjNGROUP - 1)]
    if isinstance(colours, np.ndarray):
        keep &= colours[:, 3] != 0
    groups = tuple((kind, np.flatnonzero(keep & (kinds == kind))) for kind in intersect.PRIMITIVES)
    corners, owners = intersect.mesh_triangles(m, np.flatnonzero(keep & (kinds == intersect.MESH)))
    return VisibleGeoms(tuple((k, ids) for k, ids in groups if ids.size), corners, owners)


_Posed = tuple[tuple[tuple[jax.Array, jax.Array, jax.Array], ...], jax.Array | None]


def _in_camera(m: mjx.Model, d: mjx.Data, seen: VisibleGeoms, pos: jax.Array, xmat: jax.Array) -> _Posed:
    """The geoms in view posed in the camera's frame: ``(p, rot, size)`` per group (as
    :mod:`crax.vision.intersect` takes them) and the mesh triangles' corners (T, 3, 3) or None."""
    groups = []
    for _, ids in seen.groups:
        gmat = d.geom_xmat[ids]
        rot = jnp.einsum("gjk,jl->gkl", gmat, xmat)  # geom axes (rows) in the camera's frame
        p = jnp.einsum("gjk,gj->gk", gmat, pos - d.geom_xpos[ids])
        groups.append((p, rot, jnp.asarray(m.geom_size)[ids]))
    corners = None
    if seen.owners.size:
        owners, local = np.unique(seen.owners, return_inverse=True)
        turn = jnp.einsum("jl,gjk->glk", xmat, d.geom_xmat[owners])  # geom to camera
        shift = (d.geom_xpos[owners] - pos) @ xmat  # the geoms' origins in the camera's frame
        corners = jnp.einsum("tlk,tck->tcl", turn[local], jnp.asarray(seen.corners)) + shift[local][:, None, :]
    return tuple(groups), corners


def _first_hit(seen: VisibleGeoms, posed: _Posed, shown: jax.Array | None, dirs: jax.Array,
               near: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
    """Distance along each unit ray ``dirs`` (3, R) (camera frame) to its first hit (inf for none),
    and the candidate row hit (an index into ``seen.ids``; 0 for none). A hit at a z-depth below
    ``near`` (the near plane; None: none) is no hit, so the ray goes on to the next geom's."""
    groups, corners = posed
    ts = [intersect.PRIMITIVES[kind](p, rot, size, dirs) for (kind, _), (p, rot, size) in zip(seen.groups, groups, strict=True)]
    if corners is not None:
        ts.append(intersect.triangles(corners, dirs))
    if not ts:
        return jnp.full(dirs.shape[1], jnp.inf), jnp.zeros(dirs.shape[1], jnp.int32)
    t = jnp.concatenate(ts)
    if shown is not None:  # transparency known only now: hidden, not left out
        t = jnp.where(shown[:, None], t, jnp.inf)
    if near is not None:  # clipped before each ray picks its nearest: it sees past a clipped geom
        t = jnp.where(t * -dirs[2] < near, jnp.inf, t)
    # t (rows, rays) is written by one vectorised loop and read by the argmin and the gather; a
    # single reduction as its only reader would fuse the cast into the reduction's scalar loop (many
    # times slower), and nothing else is kept per (row, ray): the normal is found afterwards
    row = jnp.argmin(t, axis=0).astype(jnp.int32)
    return jnp.take_along_axis(t, row[None], axis=0, mode="clip")[0], row


_ONE_HOT_ROWS = 256
"""Up to this many candidate rows, a ray takes its row's values by a one-hot matrix product (a
separate op, whose result XLA keeps, vectorised); beyond, by a gather (a scalar loop, which XLA
fuses into, and repeats in, every loop that reads the values)."""


_TAKE = 0


def _take_rows(table: jax.Array, row: jax.Array) -> jax.Array:
    """``table[row].T`` (F, R) for a table (N, F) of finite values and rows (R,); a row past the end
    takes zeros (one-hot) or the last row (gather)."""
    n = table.shape[0]
    if n > _ONE_HOT_ROWS or _TAKE == 1:
        return jnp.take(table.T, row, axis=1, mode="clip")
    if _TAKE == 2:
        out = jnp.broadcast_to(table[0][:, None], (table.shape[1], row.shape[0]))
        for i in range(1, n):
            out = jnp.where(row == i, table[i][:, None], out)
        return out
    one_hot = (row[None, :] == jnp.arange(n, dtype=row.dtype)[:, None]).astype(table.dtype)  # (N, R)
    return jnp.matmul(table.T, one_hot, precision=jax.lax.Precision.HIGHEST)  # exact: one product per entry


def _shading_table(seen: VisibleGeoms, posed: _Posed) -> jax.Array | None:
    """What the normal at a hit needs of the candidate row hit, one row of values per candidate
    (N, 16), or None if nothing is in view: the camera's position in the geom's frame (3), the
    geom's axes in the camera's frame (9), its size (3) and its type (1); for a triangle, its unit
    normal (camera frame) stands in for the size, with no offset and no turn."""
    groups, corners = posed
    rows = [jnp.concatenate([p, rot.reshape(-1, 9), size, jnp.full((p.shape[0], 1), kind, p.dtype)], axis=1)
            for (kind, _), (p, rot, size) in zip(seen.groups, groups, strict=True)]
    if corners is not None:
        n = corners.shape[0]
        frame = jnp.concatenate([jnp.zeros((n, 3)), jnp.broadcast_to(jnp.eye(3).reshape(1, 9), (n, 9))], axis=1)
        rows.append(jnp.concatenate([frame, intersect.triangle_normals(corners), jnp.full((n, 1), intersect.MESH)], axis=1))
    return jnp.concatenate(rows).astype(jnp.float32) if rows else None


def _facing(kinds: list[int], mine: jax.Array, dist: jax.Array, dirs: jax.Array) -> jax.Array:
    """cos θ (R,) between the outward normal at each ray's hit and the reversed ray, clipped at 0 (a
    triangle's normal on the side facing the ray), from the values of the row it hits (16, R; as
    :func:`_row_table` lays them out) and its distance along ``dirs`` (3, R)."""
    d = (dirs[0], dirs[1], dirs[2])
    v = tuple(mine[3 + 3 * k] * d[0] + mine[4 + 3 * k] * d[1] + mine[5 + 3 * k] * d[2] for k in range(3))
    hit = (mine[0] + dist * v[0], mine[1] + dist * v[1], mine[2] + dist * v[2])
    size = (mine[12], mine[13], mine[14])
    kind = mine[15]

    def outward(k: int) -> intersect.Vec:
        return size if k == intersect.MESH else intersect.normal(k, hit, size)

    normal = outward(kinds[0])
    for k in kinds[1:]:
        normal = tuple(jnp.where(kind == k, o, n) for o, n in zip(outward(k), normal, strict=True))
    length = jnp.sqrt(normal[0] ** 2 + normal[1] ** 2 + normal[2] ** 2)
    facing = -(normal[0] * v[0] + normal[1] * v[1] + normal[2] * v[2])
    if intersect.MESH in kinds:  # seen from either side
        facing = jnp.where(kind == intersect.MESH, jnp.abs(facing), facing)
    return jnp.maximum(facing * (1 / jnp.maximum(length, mujoco.mjMINVAL)), 0.0)
