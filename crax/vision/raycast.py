"""A camera image by ray casting: one ``mjx.ray`` per pixel, pure JAX, jittable and vmappable.

What a pixel reads (the conventions of MuJoCo's OpenGL renderer where it has one):

- ``depth`` (H, W) float32: z-depth, the hit's distance along the camera's optical axis (not the
  ray's length), as ``mujoco.Renderer`` returns with depth rendering on. A pixel that sees nothing,
  or sees only beyond the far plane, reads the far plane's depth ``camera.zfar * m.stat.extent``
  (MuJoCo's renderer's far value for the same ``zfar``). There is no near plane: a geom in front of
  the camera is seen however close.
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
bodies' geoms are seen (``mjx.ray`` reads ``data.geom_xpos``).

Geom types: planes, spheres, capsules, ellipsoids and boxes through ``mjx.ray``, with normals
computed from the shape; cylinders, which ``mjx.ray`` skips, through this module's own cast; meshes
through ``mjx.ray`` (every triangle of every mesh, for every ray: slow for large meshes), lit as if
facing the camera since ``mjx.ray`` does not say which face was hit. Height fields and SDF geoms are
not seen (``mjx.ray`` casts against neither).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.mjx import mjx
from crax.vision.camera import Camera

AMBIENT = 0.3
"""Share of a geom's colour a pixel shows whatever the angle it sees the surface at."""
DIFFUSE = 0.7
"""Share added in proportion to cos θ (θ: the angle between the normal and the reversed ray)."""

_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)  # MuJoCo's default geom rgba, which a material overrides
_PLANE, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX = (int(t) for t in (
    mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_CAPSULE,
    mujoco.mjtGeom.mjGEOM_ELLIPSOID, mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_BOX))
_NONE = int(mujoco.mjtGeom.mjGEOM_NONE)  # a type mjx.ray casts against no geom of


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
    kinds = np.asarray(m.geom_type)
    if isinstance(colours, np.ndarray):  # known now: leave transparent geoms out of the cast, not only its result
        kinds = np.where(colours[:, 3] == 0, _NONE, kinds)
    # The colours decide what is seen (alpha 0: hidden), so mjx.ray gets them with no materials; its
    # mat_rgba has one row because mjx.ray indexes it even where no geom has a material.
    seen = m.replace(geom_type=kinds, geom_rgba=jnp.asarray(colours), geom_matid=np.full(m.ngeom, -1, np.int32),
                     mat_rgba=jnp.ones((1, 4)))
    dirs_cam = jnp.asarray(camera.rays().reshape(-1, 3))
    dirs = dirs_cam @ xmat.T
    cylinders = _cylinders(seen, camera)

    def cast(vec: jax.Array) -> tuple[jax.Array, jax.Array]:
        return _first_hit(seen, d, pos, vec, camera, cylinders)

    if dirs.shape[0] <= camera.rays_per_chunk:
        dist, geom = jax.vmap(cast)(dirs)
    else:
        dist, geom = jax.lax.map(cast, dirs, batch_size=camera.rays_per_chunk)

    far = jnp.float32(camera.zfar) * m.stat.extent
    depth = dist * -dirs_cam[:, 2]
    hit = (geom >= 0) & (depth <= far)
    shape = (camera.height, camera.width)
    out: dict[str, jax.Array] = {}
    if camera.rgb:
        gid = jnp.maximum(geom, 0)
        cos = _facing(m, d, gid, pos + dist[:, None] * dirs, dirs)
        lit = jnp.asarray(colours)[gid, :3] * (AMBIENT + DIFFUSE * cos)[:, None]
        rgb = jnp.where(hit[:, None], lit, jnp.asarray(camera.background, jnp.float32))
        out["rgb"] = jnp.round(jnp.clip(rgb, 0, 1) * 255).astype(jnp.uint8).reshape(*shape, 3)
    if camera.depth:
        out["depth"] = jnp.where(hit, depth, far).astype(jnp.float32).reshape(shape)
    if camera.segmentation:
        out["segmentation"] = jnp.where(hit, geom, -1).astype(jnp.int32).reshape(shape)
    return out


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


def _cylinders(m: mjx.Model, camera: Camera) -> np.ndarray:
    """Ids of the cylinder geoms the camera may see, by ``mjx.ray``'s static filter (group and body)."""
    keep = np.asarray(m.geom_type) == _CYLINDER
    excluded = (camera.bodyexclude,) if isinstance(camera.bodyexclude, int) else camera.bodyexclude
    keep &= ~np.isin(np.asarray(m.geom_bodyid), excluded)
    if camera.geomgroup:
        keep &= np.asarray(camera.geomgroup, bool)[np.clip(np.asarray(m.geom_group), 0, mujoco.mjNGROUP - 1)]
    return np.flatnonzero(keep)


def _first_hit(m: mjx.Model, d: mjx.Data, pnt: jax.Array, vec: jax.Array, camera: Camera,
               cylinders: np.ndarray) -> tuple[jax.Array, jax.Array]:
    """Distance along the unit ray and id of the first geom it hits (inf and -1 for none)."""
    dist, geom = mjx.ray(m, d, pnt, vec, camera.geomgroup, True, camera.bodyexclude)
    dist = jnp.where(geom >= 0, dist, jnp.inf)
    if cylinders.size == 0:
        return dist, geom
    rot = d.geom_xmat[cylinders]
    local_pnt = jnp.einsum("gji,gj->gi", rot, pnt - d.geom_xpos[cylinders])
    local_vec = jnp.einsum("gji,j->gi", rot, vec)
    near = jax.vmap(ray_cylinder)(m.geom_size[cylinders], local_pnt, local_vec)
    near = jnp.where(m.geom_rgba[cylinders, 3] != 0, near, jnp.inf)
    k = jnp.argmin(near)
    closer = near[k] < dist
    return jnp.where(closer, near[k], dist), jnp.where(closer, jnp.asarray(cylinders)[k], geom)


def ray_cylinder(size: jax.Array, pnt: jax.Array, vec: jax.Array) -> jax.Array:
    """Distance along ``vec`` from ``pnt`` (both in the cylinder's frame) to a cylinder of radius
    ``size[0]`` and half-height ``size[1]`` about the z axis; inf where the ray misses (MuJoCo's
    ``mj_rayGeom`` for cylinders, which ``mjx.ray`` lacks)."""
    radius, half = size[0], size[1]
    tiny = mujoco.mjMINVAL
    # the flat ends z = ±half
    axial = jnp.abs(vec[2]) > tiny
    t_cap = (jnp.array([-1.0, 1.0]) * half - pnt[2]) / jnp.where(axial, vec[2], 1.0)
    on_cap = pnt[:2] + t_cap[:, None] * vec[:2]
    cap_ok = axial & (t_cap >= 0) & (jnp.sum(on_cap**2, axis=-1) <= radius**2)
    # the round side: |pnt_xy + t vec_xy|² = radius²
    a = vec[:2] @ vec[:2]
    b = vec[:2] @ pnt[:2]
    disc = b * b - a * (pnt[:2] @ pnt[:2] - radius**2)
    root = jnp.sqrt(jnp.maximum(disc, 0.0))
    t_side = (-b + jnp.array([-1.0, 1.0]) * root) / jnp.where(a > tiny, a, 1.0)
    side_ok = (a > tiny) & (disc >= 0) & (t_side >= 0) & (jnp.abs(pnt[2] + t_side * vec[2]) <= half)
    return jnp.min(jnp.where(jnp.concatenate([cap_ok, side_ok]), jnp.concatenate([t_cap, t_side]), jnp.inf))


def _facing(m: mjx.Model, d: mjx.Data, geom: jax.Array, point: jax.Array, dirs: jax.Array) -> jax.Array:
    """cos θ (P,) between the outward normal of geom ``geom`` (P,) at world ``point`` (P, 3) and the
    reversed ray ``-dirs`` (P, 3), clipped at 0; 1 for geom types without an analytic normal."""
    rot = d.geom_xmat[geom]
    p = jnp.einsum("pji,pj->pi", rot, point - d.geom_xpos[geom])
    v = jnp.einsum("pji,pj->pi", rot, dirs)
    size = jnp.maximum(m.geom_size[geom], mujoco.mjMINVAL)
    kind = jnp.asarray(m.geom_type)[geom][:, None]
    x, y, z = p[:, 0:1], p[:, 1:2], p[:, 2:3]
    zero, one = jnp.zeros_like(x), jnp.ones_like(x)
    box_axis = jnp.argmax(jnp.abs(p) / size, axis=-1)
    on_end = jnp.abs(z) / size[:, 1:2] >= jnp.sqrt(x**2 + y**2) / size[:, 0:1]
    normal = jnp.select(
        [kind == _PLANE, kind == _SPHERE, kind == _CAPSULE, kind == _ELLIPSOID, kind == _BOX, kind == _CYLINDER],
        [jnp.concatenate([zero, zero, one], axis=-1),
         p,
         jnp.concatenate([x, y, z - jnp.clip(z, -size[:, 1:2], size[:, 1:2])], axis=-1),
         p / size**2,
         jax.nn.one_hot(box_axis, 3, dtype=p.dtype) * jnp.sign(p),
         jnp.where(on_end, jnp.concatenate([zero, zero, jnp.sign(z)], axis=-1), jnp.concatenate([x, y, zero], axis=-1))],
        -v,
    )
    normal = normal / jnp.maximum(jnp.linalg.norm(normal, axis=-1, keepdims=True), mujoco.mjMINVAL)
    return jnp.maximum(-jnp.sum(normal * v, axis=-1), 0.0)
