"""crax.vision.raycast: depth, segmentation and colour images ray cast through mjx.ray, on tiny scenes."""

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from crax.core.mjx import mjx
from crax.vision.camera import Camera
from crax.vision.raycast import AMBIENT, DIFFUSE, render

# MJX's forward pass needs one degree of freedom; this body has no geom, so no camera sees it
DOF = '<body name="dof" pos="0 0 -50"><joint type="slide"/><inertial mass="1" pos="0 0 0" diaginertia="1 1 1"/></body>'
DOWN = '<camera name="down" pos="0 0 3"/>'  # MuJoCo's default orientation: looking down the world's -z


def scene(worldbody: str, assets: str = "") -> tuple[mujoco.MjModel, mjx.Model, mjx.Data]:
    m = mujoco.MjModel.from_xml_string(
        f"<mujoco><asset>{assets}</asset><worldbody>{worldbody}{DOF}</worldbody></mujoco>")
    mx = mjx.put_model(m)
    return m, mx, forward(mx, mjx.make_data(mx))


forward = jax.jit(mjx.forward)
render_jit = jax.jit(render, static_argnums=(2, 3))


def images(mx, d, camera, camera_id=0) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in render_jit(mx, d, camera, camera_id).items()}


def geom(m, name):
    return int(m.geom(name).id)


def test_plane_depth_is_the_camera_height_everywhere():
    _, mx, d = scene('<camera pos="0 0 1.7"/><geom type="plane" size="0 0 1"/>')
    camera = Camera(40, 30, fovy=70, segmentation=True)
    out = images(mx, d, camera)
    assert out["depth"].shape == (30, 40) and out["depth"].dtype == np.float32
    np.testing.assert_allclose(out["depth"], 1.7, rtol=1e-5)  # the corner rays are ~1.4x longer
    assert (out["segmentation"] == 0).all()


def test_sphere_depth_id_and_silhouette_width():
    radius, dist, fovy, width, height = 0.5, 3.0, 40.0, 101, 81
    m, mx, d = scene(f'{DOWN}<geom name="ball" type="sphere" size="{radius}"/>')
    out = images(mx, d, Camera(width, height, fovy=fovy, segmentation=True))
    seg = out["segmentation"]
    assert seg[height // 2, width // 2] == geom(m, "ball")
    np.testing.assert_allclose(out["depth"][height // 2, width // 2], dist - radius, rtol=1e-5)
    focal = height / 2 / math.tan(math.radians(fovy) / 2)  # pixels
    expected = 2 * focal * radius / math.sqrt(dist**2 - radius**2)  # the silhouette's cone
    assert abs((seg[height // 2] == geom(m, "ball")).sum() - expected) <= 1
    assert abs((seg[:, width // 2] == geom(m, "ball")).sum() - expected) <= 1
    assert (seg[0] == -1).all() and (out["depth"][0] == np.float32(50 * m.stat.extent)).all()  # misses: far plane


def test_row_zero_is_the_top_and_left_is_left():
    # looking along the world's +x: right is -y, up is +z
    m, mx, d = scene('<camera pos="0 0 1" xyaxes="0 -1 0 0 0 1"/>'
                     '<geom name="up" type="box" size=".2 .2 .2" pos="4 0 2"/>'
                     '<geom name="right" type="box" size=".2 .2 .2" pos="4 -1.2 1"/>'
                     '<geom name="left" type="sphere" size=".2" pos="4 1.2 1"/>')
    seg = images(mx, d, Camera(48, 32, segmentation=True))["segmentation"]
    rows, cols = np.indices(seg.shape)
    centre = {name: (rows[seg == geom(m, name)].mean(), cols[seg == geom(m, name)].mean()) for name in ("up", "right", "left")}
    assert centre["up"][0] < 16 - 3 and abs(centre["up"][1] - 23.5) < 1
    assert centre["right"][1] > 24 + 3 and centre["left"][1] < 24 - 3
    assert abs(centre["right"][0] - 15.5) < 1 and abs(centre["left"][0] - 15.5) < 1


def test_excluded_groups_and_body_are_not_seen():
    m, mx, d = scene(f'{DOWN}<geom name="floor" type="plane" size="0 0 1"/>'
                     '<geom name="hidden" type="sphere" size=".3" pos="-.5 0 1" group="3"/>'
                     '<body name="agent" pos=".3 0 2"><geom name="own" type="sphere" size=".3"/></body>')
    focal = 16 / math.tan(math.radians(45) / 2)
    centre = {"hidden": (16, int(16 - focal * 0.5 / 2)), "own": (16, int(16 + focal * 0.3 / 1))}  # 32x32 pixels

    def seen(**options):
        seg = images(mx, d, Camera(32, 32, rgb=False, segmentation=True, **options))["segmentation"]
        return {name: m.geom(int(seg[p])).name for name, p in centre.items()}

    agent = int(m.body("agent").id)
    assert seen() == {"hidden": "hidden", "own": "own"}
    assert seen(geomgroup=(1, 1, 1, 0, 1, 1)) == {"hidden": "floor", "own": "own"}
    assert seen(bodyexclude=agent) == {"hidden": "hidden", "own": "floor"}
    assert seen(bodyexclude=(agent,), geomgroup=(1, 1, 1, 0, 1, 1)) == {"hidden": "floor", "own": "floor"}


def test_colours_come_from_rgba_or_material_and_alpha_zero_hides():
    m, mx, d = scene(f'{DOWN}<geom name="own" type="box" size=".3 .3 .1" pos="-.6 -.6 0" rgba=".2 .4 .6 1"/>'
                     '<geom name="material" type="box" size=".3 .3 .1" pos=".6 -.6 0" material="red"/>'
                     '<geom name="both" type="box" size=".3 .3 .1" pos="-.6 .6 0" material="red" rgba=".1 .8 .1 1"/>'
                     '<geom name="proxy" type="box" size=".3 .3 .1" pos=".6 .6 0" material="red" rgba="1 1 1 0"/>',
                     assets='<material name="red" rgba=".9 .1 .1 1"/>')
    camera = Camera(64, 64, background=(0.0, 0.0, 1.0), segmentation=True)
    out = images(mx, d, camera)
    rays = camera.rays()
    focal = 32 / math.tan(math.radians(45) / 2)
    for name, rgba in {"own": (.2, .4, .6), "material": (.9, .1, .1), "both": (.1, .8, .1)}.items():
        x, y = m.geom(name).pos[:2]
        row, col = int(32 - focal * y / 2.9), int(32 + focal * x / 2.9)  # the top face is 2.9 below the camera
        assert out["segmentation"][row, col] == geom(m, name)
        shade = AMBIENT + DIFFUSE * -rays[row, col, 2]  # the top face's normal is +z
        np.testing.assert_allclose(out["rgb"][row, col], np.round(255 * np.array(rgba) * shade), atol=1)
    assert not (out["segmentation"] == geom(m, "proxy")).any()
    miss = out["segmentation"] == -1
    assert miss.any() and (out["rgb"][miss] == [0, 0, 255]).all()


SHAPES = {
    "sphere": ('type="sphere" size=".5"', lambda p, s: np.linalg.norm(p) - s[0]),
    "ellipsoid": ('type="ellipsoid" size=".6 .3 .4"', lambda p, s: np.sum(p**2 / s**2) - 1),
    "box": ('type="box" size=".4 .3 .2"', lambda p, s: np.max(np.abs(p) - s)),
    "capsule": ('type="capsule" size=".25 .35"',
                lambda p, s: np.linalg.norm(p - [0, 0, np.clip(p[2], -s[1], s[1])]) - s[0]),
    "cylinder": ('type="cylinder" size=".4 .25"', lambda p, s: max(np.hypot(p[0], p[1]) - s[0], abs(p[2]) - s[1])),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shading_follows_the_surface_normal(shape):
    """Lambertian headlight: each hit pixel's colour is grey * (AMBIENT + DIFFUSE cos θ), with the
    normal taken here as the numerical gradient of the shape's implicit function."""
    attrs, implicit = SHAPES[shape]
    m, mx, d = scene('<camera pos="0 -3 1.5" xyaxes="1 0 0 0 .447 .894"/>'
                     f'<geom name="g" {attrs} euler="20 35 50" rgba=".8 .8 .8 1"/>')
    camera = Camera(40, 40, fovy=30, segmentation=True)
    out = images(mx, d, camera)
    cam_pos, cam_mat = m.cam_pos[0], np.asarray(d.cam_xmat[0])
    rays = camera.rays() @ cam_mat.T
    g = geom(m, "g")
    seg = out["segmentation"]
    inner = (seg == g) & (np.pad(seg, 1, mode="edge")[:-2, 1:-1] == g) & (np.pad(seg, 1, mode="edge")[2:, 1:-1] == g) \
        & (np.pad(seg, 1, mode="edge")[1:-1, :-2] == g) & (np.pad(seg, 1, mode="edge")[1:-1, 2:] == g)
    assert inner.sum() > 50
    rot, pos, size = np.asarray(d.geom_xmat[g]), np.asarray(d.geom_xpos[g]), m.geom_size[g]
    err = []
    for row, col in zip(*np.nonzero(inner), strict=True):
        ray = rays[row, col]
        hit = cam_pos + ray * out["depth"][row, col] / -camera.rays()[row, col, 2]
        local = rot.T @ (hit - pos)
        grad = np.array([implicit(local + e, size) - implicit(local - e, size) for e in np.eye(3) * 1e-4])
        normal = rot @ (grad / np.linalg.norm(grad))
        expected = 255 * 0.8 * (AMBIENT + DIFFUSE * max(0.0, -normal @ ray))
        err.append(abs(float(out["rgb"][row, col, 0]) - expected))
    # pixels where the hit sits on an edge (box, cylinder rims) may take either face's normal
    assert np.mean(np.array(err) <= 1.5) > 0.95, sorted(err)[-10:]


def test_depth_and_ids_match_mujoco_mj_ray_on_every_geom_type():
    """Every pixel against MuJoCo's own ray caster (float64, C), cylinders included: mjx.ray skips them."""
    m, mx, d = scene('<camera pos="0 -4 2" xyaxes="1 0 0 0 .447 .894"/>'
                     '<geom type="plane" size="3 3 1"/>'
                     '<geom type="sphere" size=".4" pos="-1 0 .5"/>'
                     '<geom type="capsule" size=".2 .4" pos="0 .8 .5" euler="0 60 0"/>'
                     '<geom type="ellipsoid" size=".5 .3 .2" pos="1 0 .5" euler="10 20 30"/>'
                     '<geom type="box" size=".3 .2 .4" pos="0 -1 .4" euler="0 0 30"/>'
                     '<geom type="cylinder" size=".3 .25" pos="-1 1.2 .6" euler="70 0 20"/>'
                     '<geom type="cylinder" size=".2 .4" pos="1 1.5 .4"/>')
    camera = Camera(48, 36, fovy=50, rgb=False, segmentation=True)
    out = images(mx, d, camera)
    md = mujoco.MjData(m)
    mujoco.mj_forward(m, md)
    rays = camera.rays()
    world = rays @ md.cam_xmat[0].reshape(3, 3).T
    ids = np.zeros((36, 48), np.int32)
    depth = np.zeros((36, 48))
    found = np.zeros(1, np.int32)
    for row, col in np.ndindex(36, 48):
        dist = mujoco.mj_ray(m, md, md.cam_xpos[0], world[row, col].astype(np.float64), None, 1, -1, found)
        ids[row, col] = found[0]
        depth[row, col] = dist * -rays[row, col, 2] if found[0] >= 0 else 50 * m.stat.extent
    assert set(np.unique(ids)) == set(range(-1, m.ngeom)), "every geom and the sky in view"
    assert np.mean(out["segmentation"] == ids) > 0.995
    same = out["segmentation"] == ids
    np.testing.assert_allclose(out["depth"][same], depth[same], rtol=1e-4, atol=1e-4)


def test_mocap_geoms_move_with_the_mocap_body():
    m, mx, d = scene(f'{DOWN}<body name="target" mocap="true" pos="0 0 0"><geom name="t" type="sphere" size=".2"/></body>')
    moved = forward(mx, d.replace(mocap_pos=jnp.array([[0.0, 0.0, 1.5]])))
    camera = Camera(33, 33, rgb=False, segmentation=True)
    before, after = images(mx, d, camera), images(mx, moved, camera)
    assert before["segmentation"][16, 16] == after["segmentation"][16, 16] == geom(m, "t")
    np.testing.assert_allclose([before["depth"][16, 16], after["depth"][16, 16]], [2.8, 1.3], rtol=1e-5)


def test_jit_vmap_over_a_batch_of_data_matches_one_at_a_time():
    m, mx, d = scene(f'{DOWN}<geom type="plane" size="0 0 1"/>'
                     '<body name="target" mocap="true"><geom type="box" size=".3 .3 .3"/></body>')
    heights = jnp.array([0.0, 0.5, 1.0, 1.5])
    batch = jax.jit(jax.vmap(lambda z: mjx.forward(mx, d.replace(mocap_pos=jnp.array([[0.2, 0.1, 0.0]]) + jnp.array([0.0, 0.0, z])))))(heights)
    camera = Camera(24, 20, segmentation=True)
    stacked = jax.jit(jax.vmap(render, in_axes=(None, 0, None, None)), static_argnums=(2, 3))(mx, batch, camera, 0)
    assert stacked["rgb"].shape == (4, 20, 24, 3) and stacked["rgb"].dtype == jnp.uint8
    assert stacked["segmentation"].dtype == jnp.int32 and stacked["depth"].dtype == jnp.float32
    for i in range(4):
        one = images(mx, jax.tree.map(lambda x, i=i: x[i], batch), camera)
        for key, value in one.items():
            np.testing.assert_array_equal(np.asarray(stacked[key][i]), value)
    np.testing.assert_allclose(np.asarray(stacked["depth"][:, 10, 12]), 2.7 - heights, rtol=1e-5)


def test_casting_in_chunks_gives_the_same_image():
    _, mx, d = scene(f'{DOWN}<geom type="plane" size="0 0 1"/><geom type="sphere" size=".5" pos=".3 0 .5"/>'
                     '<geom type="cylinder" size=".3 .3" pos="-.5 .2 .3"/>')
    whole = images(mx, d, Camera(30, 22, segmentation=True))
    chunked = images(mx, d, Camera(30, 22, segmentation=True, rays_per_chunk=97))  # 660 rays: 6 chunks and a rest
    for key, value in whole.items():
        np.testing.assert_array_equal(chunked[key], value)


def test_the_near_plane_hides_what_is_nearer_and_shows_what_is_behind():
    """A box from 5 to 13 cm under the camera, its top inside a 10 cm near plane, is not seen: the rays
    through it see the sphere and the floor behind it (as OpenGL clips the box's top face and draws none
    of its inside, the back faces)."""
    m, mx, d = scene(f'{DOWN}<geom name="floor" type="plane" size="0 0 1"/>'
                     '<geom name="near" type="box" size=".5 .5 .04" pos="0 0 2.91"/>'
                     '<geom name="ball" type="sphere" size=".3" pos="0 0 1"/>')
    seen = Camera(21, 21, fovy=60, rgb=False, segmentation=True, znear=0.0)
    clipped = dataclasses.replace(seen, znear=0.1 / float(m.stat.extent))
    without, near = images(mx, d, seen), images(mx, d, clipped)
    assert (without["segmentation"] == geom(m, "near")).all()  # the box fills the view
    np.testing.assert_allclose(without["depth"][10, 10], 0.05, rtol=1e-4)
    assert not (near["segmentation"] == geom(m, "near")).any()
    assert near["segmentation"][10, 10] == geom(m, "ball") and near["segmentation"][0, 0] == geom(m, "floor")
    np.testing.assert_allclose(near["depth"][10, 10], 1.7, rtol=1e-4)
    np.testing.assert_allclose(near["depth"][0, 0], 3.0, rtol=1e-4)


def test_camera_checks_its_settings():
    with pytest.raises(ValueError, match="at least one"):
        Camera(8, 8, rgb=False, depth=False)
    with pytest.raises(ValueError, match="geomgroup"):
        Camera(8, 8, geomgroup=(1, 0))
    with pytest.raises(ValueError, match="fovy"):
        Camera(8, 8, fovy=180)
    with pytest.raises(ValueError, match="znear"):
        Camera(8, 8, znear=60.0)


@functools.cache
def opengl_renderer(m: mujoco.MjModel, width: int, height: int):
    from crax import render as gl

    try:
        return gl._new_renderer(m, width, height)
    except gl.RenderingUnavailable as e:
        pytest.skip(f"MuJoCo's OpenGL renderer cannot run here: {e}")


def test_depth_agrees_with_mujocos_opengl_renderer():
    m, mx, d = scene('<camera pos="0 -4 2" xyaxes="1 0 0 0 .6 .8" fovy="50"/>'
                     '<geom type="plane" size="4 4 1"/>'
                     '<geom type="sphere" size=".4" pos="-1 0 .5"/>'
                     '<geom type="box" size=".3 .2 .4" pos="0 -1 .4" euler="0 0 30"/>'
                     '<geom type="ellipsoid" size=".5 .3 .2" pos="1 0 .5" euler="10 20 30"/>'
                     '<geom type="capsule" size=".2 .4" pos="0 .8 .5" euler="0 60 0"/>'
                     '<geom type="cylinder" size=".2 .4" pos="1 1.5 .4"/>')
    width, height = 64, 48
    renderer = opengl_renderer(m, width, height)
    md = mujoco.MjData(m)
    mujoco.mj_forward(m, md)
    renderer.enable_depth_rendering()
    renderer.update_scene(md, camera=0)
    reference = renderer.render().copy()
    renderer.disable_depth_rendering()
    renderer.enable_segmentation_rendering()
    renderer.update_scene(md, camera=0)
    reference_ids = renderer.render()[..., 0].copy()
    renderer.disable_segmentation_rendering()

    out = images(mx, d, Camera(width, height, fovy=50, rgb=False, segmentation=True))
    seg = out["segmentation"]
    padded = np.pad(seg, 1, mode="edge")
    interior = np.all([padded[1 + dr:height + 1 + dr, 1 + dc:width + 1 + dc] == seg
                       for dr in (-1, 0, 1) for dc in (-1, 0, 1)], axis=0)
    assert (seg == -1).any() and interior.mean() > 0.8
    assert np.mean(reference_ids[interior] == seg[interior]) > 0.99
    # OpenGL draws curved geoms as facets (a few millimetres off the true surface here)
    np.testing.assert_allclose(out["depth"][interior], reference[interior], rtol=5e-3, atol=5e-3)
