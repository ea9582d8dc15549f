"""crax's ``vision`` camera (crax.sensors.camera) against what Safety-Gymnasium 1.0.0's camera sees on
hand-set states (tests/data/safety_gym_vision_frames.json, recorded by
tools/safety_gymnasium/sg_vision_frames.py from MuJoCo's OpenGL renderer).

Per agent (Point, Car, Doggo, Ant, Racecar) the recording holds a few cases of ``Safety{Agent}Goal1Vision-v0``:
the agent's qpos, the layout (the goal and three hazards in view, the other hazards and the vase parked
behind the camera), and per object (``goal``, ``hazard{i}``, ``agent``: the geoms of the agent's bodies)
its pixel count and centroid in a SIZE×SIZE segmentation render. crax's env of that id, at that
``vision_size`` and with a second camera sensor on the same camera giving the segmentation channel, is put
in each recorded state (the agent's qpos, every object's position, MuJoCo's forward pass) and rendered,
all of an agent's cases in one jitted, vmapped call.

Two comparisons:

- :func:`test_camera_sees_as_safety_gymnasium`: the camera itself (its pose from the agent's body, field
  of view, image size, projection and ray cast: the env's own camera sensor's settings) on the scene
  Safety-Gymnasium draws: the goal and hazards shaped as Safety-Gymnasium's (:data:`SG_SHAPES`), every
  geom group shown (its renderer turns every group on), and the geoms crax sees nearer than the near
  plane left out (:func:`near_plane_clipped`). Every object of every case must match.
- :func:`test_served_image`: the env as served (its observation, through ``suite.observe``), object kind
  by kind. Where crax's scene differs from Safety-Gymnasium's the comparison is an ``xfail(strict=True)``
  saying why (:data:`SERVED_GAPS`); the camera's pose and field of view are not among the reasons.

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
from crax.suites.safety_gym.vision import VISION_KEY
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
floor, a hazard 2 cm thick from 1 cm above it; crax's are both 1 cm thick discs lying on the floor."""

NEAR_PLANE = {"Racecar": {"agent/bumper"}}
"""Per agent, the geoms crax's camera sees nearer than Safety-Gymnasium's near plane (which OpenGL clips
and crax's ray cast, with no near plane, does not): the Racecar's camera sits 1.4 cm behind its front
bumper's box, inside the 2.9 cm near plane."""

GOAL_HIDDEN = ("crax's goal is in geom group 3, which the camera sensor does not show (VISIBLE_GROUPS: groups "
               "0-2), and is a 1 cm disc on the floor; Safety-Gymnasium shows every group and its goal is a "
               "cylinder 0.3 m tall: crax sees no goal pixel where Safety-Gymnasium sees 32 to 280")
HAZARDS_THIN = ("crax's hazards are 1 cm thick discs on the floor (top at 1 cm), Safety-Gymnasium's 2 cm thick "
                "cylinders 1 cm above it (top at 3 cm): crax's centroids lie up to 1.4 px off (mostly lower in the "
                "image), their pixel counts 0.56 to 1.5 times Safety-Gymnasium's (with its shapes they match: "
                "test_camera_sees_as_safety_gymnasium)")
BUMPER = ("the Racecar's camera sits inside the near plane of its front bumper; crax's ray cast has no near plane, "
          "so the bumper fills 3904 of the 4096 pixels and hides everything else (Safety-Gymnasium: no agent pixel)")
SERVED_GAPS = {("goal", agent): GOAL_HIDDEN for agent in AGENTS} | {("hazards", agent): HAZARDS_THIN for agent in AGENTS}
SERVED_GAPS |= {("agent", "Racecar"): BUMPER, ("goal", "Racecar"): f"{GOAL_HIDDEN}; {BUMPER}",
                ("hazards", "Racecar"): f"{HAZARDS_THIN}; {BUMPER}"}
"""(object kind, agent): why the env as served does not see what Safety-Gymnasium does."""


def cases(agent: str) -> dict:
    return REFERENCE["agents"][agent]["cases"]


@functools.cache
def scene(agent: str):
    """The env (``vision`` at the recorded size, and a segmentation camera beside it), and its data and task
    in every recorded case, stacked: the agent's qpos, every object where the case puts it, then
    MuJoCo's forward pass (:mod:`tests.env.c_forward`)."""
    env = crax.make(f"Safety{agent}Goal1Vision-v0", vision_size=SIZE,
                    sensors={"camera": {"width": SIZE, "height": SIZE, "channels": "segmentation", "key": SEGMENTATION}})
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
    """The geom id each pixel of the env's ``vision`` camera sees in every case, on Safety-Gymnasium's
    scene: the goal and hazards reshaped and raised as :data:`SG_SHAPES`, every geom group shown, and the
    bodies of the geoms seen nearer than the near plane left out; and the names of those geoms."""
    env, data, _ = scene(agent)
    m, sensor = env.mj_model, camera_sensor(env, VISION_KEY)
    size, xpos = np.array(env.mjx_model.geom_size), data.geom_xpos
    for label, (half, z) in SG_SHAPES.items():
        ids = object_geoms(env, label)
        size[ids, 1] = half
        xpos = xpos.at[:, ids, 2].set(z)  # mocap bodies: the geoms sit at their bodies' positions, unturned
    model, data = env.mjx_model.replace(geom_size=jnp.asarray(size)), data.replace(geom_xpos=xpos)
    settings = dataclasses.replace(sensor.settings, rgb=False, depth=True, segmentation=True, geomgroup=())

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


@pytest.mark.parametrize("agent, kind", [
    pytest.param(agent, kind, marks=[pytest.mark.xfail(strict=True, reason=SERVED_GAPS[kind, agent])]
                 if (kind, agent) in SERVED_GAPS else [])
    for agent in AGENTS for kind in ("agent", "hazards", "goal")])
def test_served_image(agent, kind):
    """The env's own ``vision`` camera, as served, against Safety-Gymnasium's: its own pixels, the hazards', the goal's."""
    assert not mismatches(agent, served(agent)[1], (kind,))
