"""crax.vision.intersect: each primitive's vectorised cast and normal against MuJoCo's own ``mju_rayGeom``
(float64, C), from outside and from inside the geoms, on many random poses, sizes and rays."""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from crax.vision import intersect

TYPES = {name: getattr(intersect, name.upper()) for name in ("plane", "sphere", "capsule", "ellipsoid", "cylinder", "box")}


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, q / np.linalg.norm(q))
    return mat.reshape(3, 3)


def random_size(rng, kind) -> np.ndarray:
    size = rng.uniform(0.05, 0.8, 3)
    if kind == intersect.PLANE:
        size[:2] = np.where(rng.random(2) < 0.3, 0.0, rng.uniform(0.5, 3.0, 2))  # infinite along some axes
    if kind == intersect.CYLINDER and rng.random() < 0.3:
        size[1] = 0.005  # flat discs (Safety-Gymnasium's hazards)
    return size


def scene(kind, seed, n_geoms=24, n_rays=400):
    """Geoms scattered about one camera at the origin (some around it: rays from inside), rays in
    every direction; the camera's frame is the world's."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(n_geoms, 3)) * 1.2
    pos[:3] = rng.normal(size=(3, 3)) * 0.03  # the camera inside these, for most sizes
    mats = np.stack([random_rotation(rng) for _ in range(n_geoms)])
    sizes = np.stack([random_size(rng, kind) for _ in range(n_geoms)])
    dirs = rng.normal(size=(n_rays, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return pos, mats, sizes, dirs


def reference(kind, pos, mats, sizes, dirs):
    """MuJoCo's distances (G, R), inf for misses, and its normals (G, R, 3)."""
    dist = np.full((len(pos), len(dirs)), np.inf)
    normals = np.zeros((len(pos), len(dirs), 3))
    normal = np.zeros(3)
    for g, r in np.ndindex(dist.shape):
        x = mujoco.mju_rayGeom(pos[g], mats[g].ravel(), sizes[g], np.zeros(3), dirs[r], kind, normal)
        if x >= 0:
            dist[g, r], normals[g, r] = x, normal
    return dist, normals


def cast(kind, pos, mats, sizes, dirs):
    p = np.einsum("gjk,gj->gk", mats, -pos)  # the camera (origin) in each geom's frame
    rot = np.transpose(mats, (0, 2, 1))  # geom axes as rows, in the camera's (world) frame
    fn = jax.jit(intersect.PRIMITIVES[kind])
    return np.asarray(fn(*(jnp.asarray(x, jnp.float32) for x in (p, rot, sizes, dirs.T))))


@pytest.mark.parametrize("name", sorted(TYPES))
def test_distances_match_mujocos_ray_geom(name):
    kind = TYPES[name]
    for seed in range(3):
        pos, mats, sizes, dirs = scene(kind, seed)
        expected, _ = reference(kind, pos, mats, sizes, dirs)
        got = cast(kind, pos, mats, sizes, dirs)
        hit = np.isfinite(expected)
        assert hit.mean() > 0.05 and (~hit).mean() > 0.05
        agree = np.isfinite(got) == hit
        assert agree.mean() > 0.998, f"{name}: {np.sum(~agree)} of {agree.size} disagree on hit or miss"
        both = agree & hit & (expected < 100)  # not rays grazing an infinite plane, kilometres away
        np.testing.assert_allclose(got[both], expected[both], rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", sorted(TYPES))
def test_normals_match_mujocos_ray_geom(name):
    """intersect.normal at the hit, turned to world, against the normal mju_rayGeom reports (from outside:
    the headlight's cosine is what the renderer uses)."""
    kind = TYPES[name]
    pos, mats, sizes, dirs = scene(kind, 7)
    pos[:3] += 5.0  # no camera inside a geom here
    expected, normals = reference(kind, pos, mats, sizes, dirs)
    hit = np.isfinite(expected)
    g, r = np.nonzero(hit)
    local_hit = np.einsum("njk,nj->nk", mats[g], expected[g, r, None] * dirs[r] - pos[g])
    ours = intersect.normal(kind, tuple(jnp.asarray(local_hit[:, k], jnp.float32) for k in range(3)),
                            tuple(jnp.asarray(sizes[g, k], jnp.float32) for k in range(3)))
    ours = np.stack([np.asarray(x) for x in ours], axis=-1)
    ours = np.einsum("njk,nk->nj", mats[g], ours)
    ours /= np.linalg.norm(ours, axis=-1, keepdims=True)
    cos_ours = np.maximum(-np.sum(ours * dirs[r], axis=-1), 0)
    cos_mj = np.maximum(-np.sum(normals[g, r] * dirs[r], axis=-1), 0)
    # on an edge (box, cylinder rims) either face's normal will do
    assert np.mean(np.abs(cos_ours - cos_mj) < 1e-3) > 0.99


def test_triangles_match_mujocos_ray_on_a_mesh():
    rng = np.random.default_rng(3)
    corners = rng.normal(size=(60, 3, 3)) + rng.normal(size=(60, 1, 3)) * 2
    dirs = rng.normal(size=(500, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    got = np.asarray(jax.jit(intersect.triangles)(jnp.asarray(corners, jnp.float32), jnp.asarray(dirs.T, jnp.float32)))
    expected = np.full(got.shape, np.inf)
    for i, r in np.ndindex(got.shape):
        # a ray against one triangle: Möller–Trumbore in float64
        e1, e2 = corners[i, 1] - corners[i, 0], corners[i, 2] - corners[i, 0]
        pvec = np.cross(dirs[r], e2)
        det = e1 @ pvec
        if abs(det) < 1e-12:
            continue
        tvec = -corners[i, 0]
        u = tvec @ pvec / det
        qvec = np.cross(tvec, e1)
        v = dirs[r] @ qvec / det
        t = e2 @ qvec / det
        if u >= 0 and v >= 0 and u + v <= 1 and t >= 0:
            expected[i, r] = t
    hit = np.isfinite(expected)
    assert hit.sum() > 100
    agree = np.isfinite(got) == hit
    assert agree.mean() > 0.999
    both = agree & hit
    np.testing.assert_allclose(got[both], expected[both], rtol=1e-4, atol=1e-5)
