"""crax's ``vision`` camera (crax.sensors.camera) against what Safety-Gymnasium 1.0.0's camera sees on
hand-set states (tests/data/safety_gym_vision_frames.json, recorded by
tools/safety_gymnasium/sg_vision_frames.py from MuJoCo's OpenGL renderer).

Per agent (Point, Car, Doggo, Ant, Racecar) the recording holds a few cases of ``Safety{Agent}Goal1Vision-v0``:
the agent's qpos, the layout (the goal and three hazards in view, the other hazards and the vase parked
behind the camera), and per object (``goal``, ``hazard{i}``, ``agent``: the geoms of the agent's bodies)
its pixel count and centroid in a SIZE×SIZE segmentation render. crax's env of that id, at that
``vision_size`` and with a second camera sensor on the same camera, seeing the same scene, giving the
segmentation channel, is put in each recorded state (the agent's qpos, every object's position, MuJoCo's
forward pass) and rendered, all of an agent's cases in one jitted, vmapped call.

Two comparisons:

- :func:`test_camera_sees_as_safety_gymnasium`: the camera itself (its pose from the agent's body, field
  of view, image size, projection and ray cast: the env's own camera sensor's settings) on the scene
  without the ray cast's near plane, every geom group shown, and the geoms crax sees nearer than
  Safety-Gymnasium's recorded near plane left out here (:func:`near_plane_clipped`). Every object of
  every case must match.
- :func:`test_served_image`: the env as served (its observation, through ``suite.observe``), object kind
  by kind: its goal and hazards shaped as Safety-Gymnasium's (:data:`SG_SHAPES`,
  :func:`test_goal_and_hazards_have_safety_gymnasiums_shapes`), every geom group seen, and its near plane
  Safety-Gymnasium's (the model's extent is Safety-Gymnasium's, :data:`crax.suites.safety_gym.vision.EXTENT`;
  the Racecar's camera sits inside it, 1.35 cm behind its bumper, whose box OpenGL clips and the ray cast
  leaves out).

Tolerances, from the data. Centroids: :data:`CENTROID_ATOL` px (on Safety-Gymnasium's scene the largest
difference is 0.27 px: one flipped pixel of a 9-pixel hazard cut by the image's edge; a 0.5 px shift is
0.35° at the 45° field of view). Pixel counts: within ``COUNT_ATOL + COUNT_RTOL · n``. The renderer
draws curved surfaces as facets (28 slices) inscribed in the true surface, which crax's ray cast hits
exactly: a 28-gon covers 0.84 % less than its circle (the Point's sphere: 908 pixels against crax's
916, 0.87 %), hence 1 %; and a pixel whose centre lies on an edge may fall either way, hence 2 pixels
(the largest other difference is 2 pixels, of 221 and 270).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.sensors.camera import CameraSensor
from crax.suites.safety_gym.vision import VISION_KEY, VisionTwin
from crax.vision import raycast
from tests import trees
from tests.env import c_forward

REFERENCE = json.loads((pathlib.Path(__file__).parents[1] / "data" / "safety_gym_vision_frames.json").read_text())
SIZE = REFERENCE["size"]
AGENTS = tuple(REFERENCE["agents"])
SEGMENTATION = "segmentation"
"""The key of the segmentation camera added beside the env's ``vision`` one."""

CENTROID_ATOL = 0.5
"""Pixels (the module docstring says why)."""
COUNT_RTOL, COUNT_ATOL = 0.01, 2
"""Relative and absolute (pixels) bounds on a pixel count's difference (the module docstring says why)."""

SG_SHAPES = {"goal": (0.15, 0.16), "hazards": (0.01, 0.02)}
"""Safety-Gymnasium 1.0.0's goal and hazards (``assets/geoms/goal.py``, ``hazards.py``), cylinders of
crax's radii: (half height, height of the centre) in metres. The goal is 0.3 m tall from 1 cm above the
floor, a hazard 2 cm thick from 1 cm above it."""

NEAR_PLANE = {"Racecar": {"agent/bumper"}}
"""Per agent, the geoms crax's camera sees nearer than Safety-Gymnasium's near plane when its own is off:
the Racecar's camera sits 1.35 cm behind its front bumper's box, inside the 2.9 cm near plane."""


def cases(agent: str) -> dict:
    return REFERENCE["agents"][agent]["cases"]


@functools.cache
def scene(agent: str):
    """The env (``vision`` at the recorded size, and a segmentation camera beside it), and its data and task
    in every recorded case, stacked: the agent's qpos, every object where the case puts it, then
    MuJoCo's forward pass (:mod:`tests.env.c_forward`)."""
    env = crax.make(f"Safety{agent}Goal1Vision-v0", vision_size=SIZE, sensors={"camera": {
        "width": SIZE, "height": SIZE, "channels": "segmentation", "key": SEGMENTATION, **VisionTwin.camera_view()}})
    suite, body = env.suite, env.body
    _, drawn = suite.init_task(env.mjx_model, env._data0, jax.random.key(0))  # the task's other entries
    qvel = jnp.zeros(body.qvel_adr[1] - body.qvel_adr[0], jnp.float32)
    datas, tasks = [], []
    for case in cases(agent).values():
        positions = {label: jnp.asarray(np.asarray(case["layout"][label], np.float32)[:, :2]) for label in suite.objects}
        data = suite.move(body.write_state(env._data0, jnp.asarray(case["qpos"], jnp.float32), qvel), positions)
        datas.append(c_forward.forward(env, data))
        tasks.append({**drawn, **positions, "hazards": suite.hazard_positions(positions)})
    return env, trees.stack(datas), trees.stack(tasks)


def camera_sensor(env, key: str) -> CameraSensor:
    return next(s for s in env.suite.sensors if isinstance(s, CameraSensor) and s.key == key)


@functools.cache
def served(agent: str) -> tuple[np.ndarray, np.ndarray]:
    """The env's observation in every case: its ``vision`` image and the geom id each pixel sees (-1: none)."""
    env, data, task = scene(agent)
    suite = env.suite
    obs = jax.jit(jax.vmap(lambda d, t: suite.observe(suite.context(env.mjx_model, d, t))))(data, task)
    return np.asarray(obs[VISION_KEY]), np.asarray(obs[SEGMENTATION])[..., 0].astype(np.int64) - 1


@functools.cache
def as_safety_gymnasium(agent: str) -> tuple[np.ndarray, set[str]]:
    """The geom id each pixel of the env's ``vision`` camera sees in every case, with the ray cast's near
    plane off, every geom group shown, and the bodies of the geoms seen nearer than Safety-Gymnasium's
    recorded near plane left out; and the names of those geoms."""
    env, data, _ = scene(agent)
    m, sensor, model = env.mj_model, camera_sensor(env, VISION_KEY), env.mjx_model
    settings = dataclasses.replace(sensor.settings, rgb=False, depth=True, segmentation=True, geomgroup=(), znear=0.0)

    def render(settings):
        out = jax.jit(jax.vmap(lambda d: raycast.render(model, d, settings, sensor.camera_id)))(data)
        return np.asarray(out["segmentation"]), np.asarray(out["depth"])

    seg, depth = render(settings)
    near = near_plane_clipped(seg, depth, REFERENCE["agents"][agent]["camera"]["znear"])
    if near:
        seg, _ = render(dataclasses.replace(settings, bodyexclude=tuple(sorted({int(m.geom_bodyid[g]) for g in near}))))
    return seg, {m.geom(g).name for g in near}


def near_plane_clipped(seg: np.ndarray, depth: np.ndarray, znear: float) -> list[int]:
    """The geoms seen at a depth (along the optical axis) below ``znear``: those OpenGL's near plane
    clips, through which Safety-Gymnasium's camera sees what lies behind."""
    return sorted({int(g) for g in np.unique(seg[depth < znear]) if g >= 0})


def object_geoms(env, label: str) -> list[int]:
    """The drawn geoms of an object's copies (``goal/0``, ``hazards/3``: not their ray proxies)."""
    return [env.mj_model.geom(f"{label}/{i}").id for i in range(env.suite.objects[label].count)]


def masks(env, seg: np.ndarray) -> dict[str, np.ndarray]:
    """Per recorded object, the pixels it covers in ``seg`` (one case's geom ids)."""
    m = env.mj_model
    root = m.body_rootid[m.cam_bodyid[camera_sensor(env, VISION_KEY).camera_id]]
    agent = [g for g in range(m.ngeom) if m.body_rootid[m.geom_bodyid[g]] == root]
    out = {"goal": seg == object_geoms(env, "goal")[0], "agent": np.isin(seg, agent)}
    for i, g in enumerate(object_geoms(env, "hazards")):
        out[f"hazard{i}"] = seg == g
    return out


def measured(mask: np.ndarray) -> tuple[int, np.ndarray | None]:
    """Pixel count and centroid ([x, y]: column and row of the pixels' centres, as recorded)."""
    rows, cols = np.nonzero(mask)
    return int(rows.size), (np.array([cols.mean() + 0.5, rows.mean() + 0.5]) if rows.size else None)


def kind_of(obj: str) -> str:
    """A recorded object's kind: ``goal``, ``hazards`` (``hazard3``), ``agent``."""
    return "hazards" if obj.startswith("hazard") else obj


def mismatches(agent: str, seg: np.ndarray, kinds: tuple[str, ...]) -> list[str]:
    """Each recorded object of ``kinds`` (``goal``, ``hazards``, ``agent``) in each case whose pixel count
    or centroid in ``seg`` (one image per case) is out of tolerance."""
    env, _, _ = scene(agent)
    out = []
    for (name, case), image in zip(cases(agent).items(), seg, strict=True):
        found = masks(env, image)
        for obj, ref in case["objects"].items():
            if kind_of(obj) not in kinds:
                continue
            n, centroid = measured(found[obj])
            if abs(n - ref["pixels"]) > COUNT_ATOL + COUNT_RTOL * ref["pixels"]:
                out.append(f"{name} {obj}: {n} pixels, Safety-Gymnasium {ref['pixels']}")
            elif centroid is not None and ref["centroid"] is not None:
                error = np.abs(centroid - ref["centroid"]).max()
                if error > CENTROID_ATOL:
                    out.append(f"{name} {obj}: centroid {np.round(centroid, 3).tolist()}, Safety-Gymnasium "
                               f"{ref['centroid']} ({error:.2f} px)")
    return out


def test_goal_and_hazards_have_safety_gymnasiums_shapes():
    """The env's goal and hazards are Safety-Gymnasium's cylinders (:data:`SG_SHAPES`) where the cases put them."""
    env, data, task = scene("Point")
    for label, (half, z) in SG_SHAPES.items():
        ids = object_geoms(env, label)
        np.testing.assert_allclose(env.mj_model.geom_size[ids, 1], half, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(data.geom_xpos)[:, ids, 2], z, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(data.geom_xpos)[:, ids, :2], np.asarray(task[label]), atol=1e-6)


def test_the_near_plane_is_safety_gymnasiums():
    """The ``vision`` camera's near plane, in metres, is the one Safety-Gymnasium's renderer had on the
    recorded scenes (to 1 %: it moves with the layout, :data:`crax.suites.safety_gym.vision.EXTENT`),
    and so is the model's extent."""
    env, _, _ = scene("Point")
    near = camera_sensor(env, VISION_KEY).settings.znear * env.mj_model.stat.extent
    assert near == pytest.approx(REFERENCE["agents"]["Point"]["camera"]["znear"], rel=0.01)
    assert env.mj_model.stat.extent == pytest.approx(REFERENCE["agents"]["Point"]["camera"]["extent"], rel=0.01)


@pytest.mark.parametrize("agent", AGENTS)
def test_camera_sees_as_safety_gymnasium(agent):
    seg, near = as_safety_gymnasium(agent)
    assert near == NEAR_PLANE.get(agent, set())
    assert not mismatches(agent, seg, ("goal", "hazards", "agent"))


@pytest.mark.parametrize("agent", AGENTS)
def test_the_segmentation_is_the_vision_image(agent):
    """The added segmentation camera sees what the env's ``vision`` image shows: a geom exactly where the
    image is not the background (black; no geom in these scenes is black where seen)."""
    rgb, seg = served(agent)
    assert rgb.shape == (len(cases(agent)), SIZE, SIZE, 3)
    np.testing.assert_array_equal(rgb.any(axis=-1), seg >= 0)


@pytest.mark.parametrize("agent, kind", [(agent, kind) for agent in AGENTS for kind in ("agent", "hazards", "goal")])
def test_served_image(agent, kind):
    """The env's own ``vision`` camera, as served, against Safety-Gymnasium's: its own pixels, the hazards', the goal's."""
    assert not mismatches(agent, served(agent)[1], (kind,))
