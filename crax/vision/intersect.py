"""Rays from one point against many geoms at once: (geoms × rays) arrays, one geom type at a time.

Every ray of a camera image starts at the camera, so a geom's pose enters through a few numbers per
geom, and a ray through the components of its direction in the geom's frame, linear in the direction:
one small matrix product (``rows @ dirs``) gives them for every (geom, ray) pair. What is left is
elementwise arithmetic on (G, R) arrays, which XLA fuses into a loop or two, instead of ``mjx.ray``'s
per-ray pass over every geom of the model (its transforms, its filters and its types one by one).

The functions take the geoms in the camera's frame, where every ray starts at the origin:

- ``p`` (G, 3): the camera's position in each geom's frame,
- ``rot`` (G, 3, 3): each geom's axes in the camera's frame as rows (``rot[g] @ dir`` is a camera-frame
  direction in geom ``g``'s frame),
- ``size`` (G, 3): ``model.geom_size``,
- ``dirs`` (3, R): the rays' unit directions in the camera's frame, one a column,

and return ``t`` (G, R): the distance along each ray to its first hit on each geom (inf where it
misses; the semantics of MuJoCo's ``mj_rayGeom``: a ray that starts inside a geom hits it on the way
out). Only ``t`` is computed for every pair, so XLA fuses each type's arithmetic into the one loop
that writes ``t``; the surface normal is asked for afterwards, at the hit each ray keeps
(:func:`normal`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

_TINY = mujoco.mjMINVAL

Vec = tuple[jax.Array, jax.Array, jax.Array]
"""A vector's three coordinates, each an array of the same shape."""


def _local(rot: jax.Array, dirs: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The rays' directions in each geom's frame, three (G, R): component k is ``rot[:, k] @ dirs``,
    written out elementwise (a contraction over 3 as a dot would be a separate, unfused op whose
    result goes through memory)."""
    return _dot(rot[:, 0], dirs), _dot(rot[:, 1], dirs), _dot(rot[:, 2], dirs)


def _dot(rows: jax.Array, dirs: jax.Array) -> jax.Array:
    """``rows @ dirs`` (G, R) for rows (G, 3) and dirs (3, R), elementwise."""
    return rows[:, 0:1] * dirs[0] + rows[:, 1:2] * dirs[1] + rows[:, 2:3] * dirs[2]


def _nearest(x0: jax.Array, x1: jax.Array, ok: jax.Array) -> jax.Array:
    """The first of the roots ``x0 <= x1`` that is ahead of the ray, inf for neither."""
    return jnp.where(ok & (x0 >= 0), x0, jnp.where(ok & (x1 >= 0), x1, jnp.inf))


def plane(p: jax.Array, rot: jax.Array, size: jax.Array, dirs: jax.Array) -> jax.Array:
    """Planes z = 0 of their frames, seen from the +z side only, within ``|x| <= size[0]`` and
    ``|y| <= size[1]`` where those are positive (``mjx.ray``'s ``_ray_plane``)."""
    vx, vy, vz = _local(rot, dirs)
    px, py, pz = (p[:, k:k + 1] for k in range(3))
    t = -pz / jnp.where(vz <= -_TINY, vz, -1.0)
    ok = (vz <= -_TINY) & (t >= 0)
    sx, sy = size[:, 0:1], size[:, 1:2]
    ok &= (sx <= 0) | (jnp.abs(px + t * vx) <= sx)
    ok &= (sy <= 0) | (jnp.abs(py + t * vy) <= sy)
    return jnp.where(ok, t, jnp.inf)


def sphere(p: jax.Array, rot: jax.Array, size: jax.Array, dirs: jax.Array) -> jax.Array:
    """Spheres of radius ``size[0]``: |p + t v|² = r², a = 1 for unit rays."""
    b = _dot(jnp.einsum("gk,gkj->gj", p, rot), dirs)  # p·v, as a camera-frame vector times the rays
    radius = size[:, 0:1]
    det = b * b - (jnp.sum(p * p, axis=-1, keepdims=True) - radius * radius)
    root = jnp.sqrt(jnp.maximum(det, 0.0))
    return _nearest(-b - root, -b + root, det >= _TINY)


def ellipsoid(p: jax.Array, rot: jax.Array, size: jax.Array, dirs: jax.Array) -> jax.Array:
    """Ellipsoids of semi-axes ``size``: Σ (p + t v)² / size² = 1."""
    v = _local(rot, dirs)
    s = 1.0 / jnp.maximum(size * size, _TINY)  # (G, 3)
    sv = [s[:, k:k + 1] * v[k] for k in range(3)]
    a = sv[0] * v[0] + sv[1] * v[1] + sv[2] * v[2]
    b = sv[0] * p[:, 0:1] + sv[1] * p[:, 1:2] + sv[2] * p[:, 2:3]
    c = jnp.sum(s * p * p, axis=-1, keepdims=True) - 1.0
    det = b * b - a * c
    root = jnp.sqrt(jnp.maximum(det, 0.0))
    inv_a = 1.0 / jnp.where(a == 0, _TINY, a)
    return _nearest((-b - root) * inv_a, (-b + root) * inv_a, det >= _TINY)


def capsule(p: jax.Array, rot: jax.Array, size: jax.Array, dirs: jax.Array) -> jax.Array:
    """Capsules of radius ``size[0]`` and half-length ``size[1]`` along z (``mjx.ray``'s ``_ray_capsule``)."""
    vx, vy, vz = _local(rot, dirs)
    px, py, pz = (p[:, k:k + 1] for k in range(3))
    radius, half = size[:, 0:1], size[:, 1:2]
    # the round side: a t² + 2 b t + c = 0 in the xy plane, between the flat ends
    a = vx * vx + vy * vy
    bxy = vx * px + vy * py
    cxy = px * px + py * py - radius * radius
    det = bxy * bxy - a * cxy
    root = jnp.sqrt(jnp.maximum(det, 0.0))
    inv_a = 1.0 / jnp.where(a == 0, _TINY, a)
    t = _nearest((-bxy - root) * inv_a, (-bxy + root) * inv_a, det >= _TINY)
    t = jnp.where(jnp.abs(pz + t * vz) <= half, t, jnp.inf)
    # the two half-spheres at z = ±half: |p - (0, 0, ±half) + t v|² = r², a = 1
    for sign in (1.0, -1.0):
        dz = pz - sign * half
        b = bxy + vz * dz
        det = b * b - (cxy + dz * dz)
        root = jnp.sqrt(jnp.maximum(det, 0.0))
        for x in (-b - root, -b + root):
            t = jnp.where((det >= _TINY) & (x >= 0) & (sign * (pz + x * vz) >= half) & (x < t), x, t)
    return t


def cylinder(p: jax.Array, rot: jax.Array, size: jax.Array, dirs: jax.Array) -> jax.Array:
    """Cylinders of radius ``size[0]`` and half-height ``size[1]`` along z (MuJoCo's ``mj_rayGeom``,
    which ``mjx.ray`` lacks). Of MuJoCo's four candidates (two flat ends, two crossings of the round
    side) only two can come first, so only those are cast: the round side where the ray enters it
    (leaves it, for a camera inside the infinite cylinder), and the end facing a camera above or
    below the cylinder (the end the ray heads for, for a camera level with it)."""
    vx, vy, vz = _local(rot, dirs)
    px, py, pz = (p[:, k:k + 1] for k in range(3))
    radius, half = size[:, 0:1], size[:, 1:2]
    c = px * px + py * py - radius * radius  # < 0: the camera is inside the infinite cylinder
    a = vx * vx + vy * vy
    b = vx * px + vy * py
    # the end: |p_xy + t v_xy|² - r² = c + 2 b t + a t² <= 0 where the ray crosses its plane
    level = jnp.abs(pz) <= half
    end = jnp.where(level, jnp.where(vz > 0, half, -half), jnp.where(pz > 0, half, -half))
    axial = jnp.abs(vz) > _TINY
    x = (end - pz) * (1.0 / jnp.where(axial, vz, 1.0))
    t = jnp.where(axial & (x >= 0) & (c + x * (2 * b + x * a) <= 0), x, jnp.inf)
    # the round side: a t² + 2 b t + c = 0 between the ends
    det = b * b - a * c
    root = jnp.sqrt(jnp.maximum(det, 0.0))
    x = (-b + jnp.where(c < 0, root, -root)) * (1.0 / jnp.where(a > _TINY, a, 1.0))
    side = (a > _TINY) & (det >= 0) & (x >= 0) & (jnp.abs(pz + x * vz) <= half)
    return jnp.where(side & (x < t), x, t)


def box(p: jax.Array, rot: jax.Array, size: jax.Array, dirs: jax.Array) -> jax.Array:
    """Boxes of half-sizes ``size``, by slabs: the ray is inside all three between the largest entry
    and the smallest exit; it hits at the entry, or at the exit if it starts inside."""
    v = _local(rot, dirs)
    near, far = None, None
    for k in range(3):
        inv = 1.0 / v[k]  # ±inf along a face: its slab then holds the whole ray or none of it
        lo, hi = (-size[:, k:k + 1] - p[:, k:k + 1]) * inv, (size[:, k:k + 1] - p[:, k:k + 1]) * inv
        enter, leave = jnp.minimum(lo, hi), jnp.maximum(lo, hi)
        near = enter if near is None else jnp.maximum(near, enter)
        far = leave if far is None else jnp.minimum(far, leave)
    assert near is not None and far is not None
    return jnp.where((near <= far) & (far >= 0), jnp.where(near >= 0, near, far), jnp.inf)


def triangles(corners: jax.Array, dirs: jax.Array) -> jax.Array:
    """Triangles (T, 3, 3) (corners in the camera's frame), hit from either side (``mjx.ray``'s
    ``_ray_triangle``), by Möller–Trumbore with every ray-dependent term linear in the direction:
    ``det = d·(e2 × e1)``, ``u det = d·(e2 × w)``, ``v det = d·(w × e1)``, ``t det = e2·(w × e1)``,
    with ``e1, e2`` the edges from corner 0 and ``w`` = the origin minus corner 0."""
    e1, e2, w = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0], -corners[:, 0]
    normal = jnp.cross(e2, e1)
    q = jnp.cross(w, e1)
    det, u, v = _dot(normal, dirs), _dot(jnp.cross(e2, w), dirs), _dot(q, dirs)
    t_det = jnp.sum(e2 * q, axis=-1, keepdims=True)
    ok = jnp.abs(det) > _TINY * jnp.maximum(jnp.linalg.norm(normal, axis=-1, keepdims=True), _TINY)
    inv = 1.0 / jnp.where(ok, det, 1.0)
    u, v, t = u * inv, v * inv, t_det * inv
    ok &= (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    return jnp.where(ok, t, jnp.inf)


def triangle_normals(corners: jax.Array) -> jax.Array:
    """Unit normals (T, 3) of triangles (T, 3, 3), either side's (a triangle is seen from both)."""
    normal = jnp.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    return normal / jnp.maximum(jnp.linalg.norm(normal, axis=-1, keepdims=True), _TINY)


def normal(kind: int, hit: Vec, size: Vec) -> Vec:
    """The outward normal, not of unit length, of a primitive geom of type ``kind`` at a point ``hit``
    of its surface, in its frame; ``size`` its ``geom_size``. Points and sizes as three arrays of one
    shape (one coordinate each), as is the normal."""
    x, y, z = hit
    zero = jnp.zeros_like(x)
    sx, sy, sz = size
    size = (jnp.maximum(sx, _TINY), jnp.maximum(sy, _TINY), jnp.maximum(sz, _TINY))
    if kind == PLANE:
        return zero, zero, jnp.ones_like(x)
    if kind == SPHERE:
        return hit
    if kind == CAPSULE:
        return x, y, z - jnp.clip(z, -size[1], size[1])
    if kind == ELLIPSOID:
        return x / size[0]**2, y / size[1]**2, z / size[2]**2
    if kind == BOX:  # the face whose plane the point is farthest out of, relative to the size
        rx, ry, rz = jnp.abs(x) / size[0], jnp.abs(y) / size[1], jnp.abs(z) / size[2]
        on_x, on_y = (rx >= ry) & (rx >= rz), (ry > rx) & (ry >= rz)
        on_z = ~(on_x | on_y)
        return jnp.where(on_x, jnp.sign(x), 0.0), jnp.where(on_y, jnp.sign(y), 0.0), jnp.where(on_z, jnp.sign(z), 0.0)
    if kind == CYLINDER:
        on_end = jnp.abs(z) * size[0] >= jnp.sqrt(x * x + y * y) * size[1]
        return jnp.where(on_end, 0.0, x), jnp.where(on_end, 0.0, y), jnp.where(on_end, jnp.sign(z), 0.0)
    raise ValueError(f"no analytic normal for geom type {kind}")


PLANE, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = (int(t) for t in (
    mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_CAPSULE,
    mujoco.mjtGeom.mjGEOM_ELLIPSOID, mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_BOX,
    mujoco.mjtGeom.mjGEOM_MESH))


PRIMITIVES = {PLANE: plane, SPHERE: sphere, CAPSULE: capsule, ELLIPSOID: ellipsoid, CYLINDER: cylinder, BOX: box}
"""The cast of each primitive geom type, by ``mjtGeom``."""


def mesh_triangles(m, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The triangles of mesh geoms ``ids`` in their geoms' frames (T, 3, 3) float32, and the geom each
    belongs to (T,): every face of the geom's mesh, as ``mjx.ray`` casts against them."""
    vert, face = np.asarray(m.mesh_vert), np.asarray(m.mesh_face)
    vertadr, faceadr = np.asarray(m.mesh_vertadr), np.append(np.asarray(m.mesh_faceadr), face.shape[0])
    corners, owner = [], []
    for g in ids:
        mesh = int(np.asarray(m.geom_dataid)[g])
        faces = face[faceadr[mesh]:faceadr[mesh + 1]] + vertadr[mesh]
        corners.append(vert[faces])
        owner.append(np.full(faces.shape[0], g, np.int32))
    if not corners:
        return np.zeros((0, 3, 3), np.float32), np.zeros(0, np.int32)
    return np.concatenate(corners).astype(np.float32), np.concatenate(owner)
