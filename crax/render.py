"""Rendering crax states to images and videos with MuJoCo's offscreen renderer.

    import crax, jax
    from crax import render, video
    env = crax.make("PointGoal1")
    states = render.rollout(env, None, jax.random.key(0), 200)     # random actions, stacked States
    frames = render.render(env, states, camera="top")              # (201, 480, 480, 3) uint8
    video.write_video("episode.mp4", frames, fps=1 / env.dt)

Rendering runs on the host: each frame copies the joint and mocap state of one MJX ``State`` into a
``mujoco.MjData`` of a render-only copy of the env's ``MjModel`` and draws it with one cached
``mujoco.Renderer`` per (env, width, height). Placeables keep the colours they were built in
(:mod:`crax.core.palette`: hazards, goals, buttons, pillars and props in distinct colours); the copy
draws the agent in charcoal, and in red on frames whose ``state.cost > 0``. The physics model is
never touched.

Headless OpenGL: ``MUJOCO_GL`` is respected when set; otherwise EGL is tried, then OSMesa. When no
backend works, :class:`RenderingUnavailable` says which were tried and what to set.
"""

from __future__ import annotations

import atexit
import copy
import dataclasses
import functools
import importlib
import math
import os
import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core import observation, palette
from crax.core.env import Env, State
from crax.core.physics_model import PackedData
from crax.devices import xla_options
from crax.devices.distributed import is_key
from crax.video import write_video

CAMERAS = ("track", "top")
"""Valid ``camera`` names: ``track`` follows the agent's torso from behind and above; ``top`` looks
straight down on the arena (navigation suites) or on the agent (every other suite)."""

GL_BACKENDS = ("egl", "osmesa", "glfw")
"""``MUJOCO_GL`` values this module can load; without ``MUJOCO_GL`` it tries the headless two in order."""

AGENT_RGBA = palette.AGENT
COST_RGBA = palette.COST
"""The agent's colour on frames whose ``state.cost > 0``."""


class RenderingUnavailable(RuntimeError):
    """No OpenGL backend could create a rendering context (see :data:`GL_BACKENDS`)."""


# ---- OpenGL backend -------------------------------------------------------------------------------

_backend: str | None = None
"""The backend that created a renderer in this process; fixed from then on."""
_platform_set: str | None = None
"""The PYOPENGL_PLATFORM value this module set (one the user set is left alone)."""


def _context_class(name: str) -> type:
    """MuJoCo's GLContext class for backend ``name``."""
    global _platform_set
    from mujoco.rendering.classic import gl_context

    if name == getattr(gl_context, "_MUJOCO_GL", None) and hasattr(gl_context, "GLContext"):
        return gl_context.GLContext  # what mujoco itself loaded at import
    platform = os.environ.get("PYOPENGL_PLATFORM")
    if name in ("egl", "osmesa") and "OpenGL" not in sys.modules and platform in (None, "", _platform_set):
        os.environ["PYOPENGL_PLATFORM"] = _platform_set = name  # PyOpenGL reads it once, at its first import
    return importlib.import_module(f"mujoco.{name}").GLContext


def _new_renderer(model: mujoco.MjModel, width: int, height: int) -> mujoco.Renderer:
    """A ``mujoco.Renderer``, choosing the GL backend on the first call (see the module docstring)."""
    global _backend
    from mujoco.rendering.classic import gl_context

    if _backend is not None:
        return mujoco.Renderer(model, height=height, width=width)
    requested = os.environ.get("MUJOCO_GL", "").strip().lower()
    if requested and requested not in GL_BACKENDS:
        raise RenderingUnavailable(
            f"MUJOCO_GL={requested!r} is not a rendering backend crax can use; set MUJOCO_GL to one of "
            f"{', '.join(GL_BACKENDS)} (egl or osmesa for headless machines)")
    failures = []
    for name in [requested] if requested else ["egl", "osmesa"]:
        with warnings.catch_warnings(record=True) as caught:  # glfw reports through warnings
            warnings.simplefilter("always")
            try:
                # mujoco fixed its GLContext class when it was imported (from MUJOCO_GL as it was
                # then); Renderer reads this module attribute, so this is how to pick a backend later.
                gl_context.GLContext = _context_class(name)
                renderer = mujoco.Renderer(model, height=height, width=width)
            except Exception as e:  # noqa: BLE001 - any backend failure becomes one clear message
                notes = "; ".join(dict.fromkeys(str(w.message) for w in caught))
                failures.append(f"{name}: {type(e).__name__}: {str(e).strip().rstrip('.')}" + (f" ({notes})" if notes else ""))
                continue
        _backend = name
        os.environ.setdefault("MUJOCO_GL", name)
        # after the backend's own atexit hooks (egl terminates its display), so this one runs first
        atexit.register(close)
        return renderer
    tried = "MUJOCO_GL=" + requested if requested else "MUJOCO_GL unset, tried egl then osmesa"
    platform = os.environ.get("PYOPENGL_PLATFORM")
    hint = f" PYOPENGL_PLATFORM={platform} is set: unset it or give it the same value." if platform != _platform_set else ""
    raise RenderingUnavailable(
        f"no OpenGL backend could render ({tried}): " + " | ".join(failures)
        + f". Set MUJOCO_GL to one of {', '.join(GL_BACKENDS)}: egl needs libEGL (a GPU driver or Mesa's "
        "libegl1), osmesa needs libOSMesa (apt-get install libosmesa6), glfw needs a display." + hint)


# ---- per-env render state -------------------------------------------------------------------------


@dataclasses.dataclass
class _Scene:
    """The render-only model copy of one env, its MjData, palette and renderers by (width, height)."""

    model: mujoco.MjModel
    data: mujoco.MjData
    agent_geoms: np.ndarray
    torso: int
    agent_size: float
    arena: float | None
    """Half-width of the arena the top camera frames (None: it follows the agent)."""
    suite: Any
    object_geoms: dict[str, np.ndarray]
    """Each placeable's geoms by label, for the suite's :meth:`~crax.suites.base.Suite.visibility`."""
    renderers: dict[tuple[int, int], mujoco.Renderer] = dataclasses.field(default_factory=dict)
    option: mujoco.MjvOption = dataclasses.field(default_factory=mujoco.MjvOption)

    def __post_init__(self):
        self.option.geomgroup[:] = 1  # MuJoCo hides groups 3-5 by default: goals and walls are there

    def renderer(self, width: int, height: int) -> mujoco.Renderer:
        key = (width, height)
        if key not in self.renderers:
            g = self.model.vis.global_
            g.offwidth, g.offheight = max(g.offwidth, width), max(g.offheight, height)
            self.renderers[key] = _new_renderer(self.model, width, height)
        return self.renderers[key]

    def close(self) -> None:
        for r in self.renderers.values():
            r.close()
        self.renderers.clear()


_scenes: weakref.WeakKeyDictionary[Env, _Scene] = weakref.WeakKeyDictionary()


def _scene(env: Env) -> _Scene:
    base: Any = env.unwrapped  # a crax task env (mj_model, body, suite), checked below by what it has
    if base in _scenes:
        return _scenes[base]
    if not isinstance(getattr(base, "mj_model", None), mujoco.MjModel) or not hasattr(base, "body"):
        raise ValueError(f"render needs a crax task env (crax.make) with an mj_model; got {type(base).__qualname__}")
    m = copy.deepcopy(base.mj_model)
    body = base.body
    agent = np.array([g for g in range(m.ngeom) if m.body(int(m.geom_bodyid[g])).name.startswith(body.prefix)
                      and m.geom_rgba[g, 3] > 0], dtype=np.int64)
    m.geom_matid[agent] = -1  # a material's colour would win over the agent colours set per frame
    m.mat_specular[:] = np.minimum(m.mat_specular, 0.1)  # the overhead light washes out a glossy floor
    # A 4096² shadow map is most of a frame's time on a software renderer (Mesa's llvmpipe under
    # EGL): 1024² looks the same at these sizes and draws about twice as fast.
    m.vis.quality.shadowsize = min(int(m.vis.quality.shadowsize), 1024)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    torso = int(body.torso_id)
    reach = np.linalg.norm(d.geom_xpos[agent] - d.xpos[torso], axis=-1) + m.geom_rbound[agent]
    suite = base.suite
    arena = getattr(suite, "wall_extent", None) or getattr(suite, "extent", None)
    objects = {label: np.asarray(p.geom_ids, np.int64) for label, p in getattr(suite, "placeables", {}).items()
               if hasattr(p, "geom_ids")}
    scene = _Scene(model=m, data=d, agent_geoms=agent, torso=torso, agent_size=float(np.max(reach, initial=0.1)),
                   arena=float(arena) + 0.5 if isinstance(arena, int | float) else None, suite=suite,
                   object_geoms=objects)
    _scenes[base] = scene
    return scene


def close(env: Env | None = None) -> None:
    """Frees the cached renderers (and GL contexts) of ``env``, or of every env."""
    scenes = [_scenes.pop(env.unwrapped, None)] if env is not None else list(_scenes.values())
    if env is None:
        _scenes.clear()
    for s in scenes:
        if s is not None:
            s.close()



def _camera(scene: _Scene, camera: str, width: int, height: int) -> mujoco.MjvCamera:
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    torso = scene.data.xpos[scene.torso]
    if camera == "track":
        # A free camera at the torso each frame: what a tracking camera shows, without the state
        # a tracking camera keeps between frames (one renderer draws many episodes).
        cam.lookat[:] = torso
        cam.distance = max(3.0, 4.0 * scene.agent_size)
        cam.azimuth, cam.elevation = 90.0, -35.0
        return cam
    if scene.arena is not None:
        centre = np.zeros(3)
        half = max(scene.arena, float(np.max(np.abs(torso[:2]))) + 2.0 * scene.agent_size)
    else:
        centre = np.array([torso[0], torso[1], 0.0])
        half = max(1.5, 2.5 * scene.agent_size)
    fovy = math.radians(scene.model.vis.global_.fovy)
    cam.lookat[:] = centre
    cam.distance = 1.05 * half / (math.tan(fovy / 2) * min(1.0, width / height))
    cam.azimuth, cam.elevation = 90.0, -90.0
    return cam


# ---- rendering ------------------------------------------------------------------------------------


def _host_leaves(tree: Any) -> Any:
    """``tree`` without its PRNG keys (which have no host array), for :func:`jax.device_get`."""
    return jax.tree.map(lambda x: None if is_key(x) else x, tree)


_FIELDS = ("qpos", "qvel", "act", "mocap_pos", "mocap_quat")
"""The ``Data`` fields a frame reads."""


def _frame_fields(env: Env, data: Any) -> dict[str, Any]:
    """The :data:`_FIELDS` of ``data``: the scene's ``Data``, or a training stack's
    :class:`~crax.core.physics_model.PackedData` (its mocap poses are the scene's again)."""
    if isinstance(data, PackedData):
        model: Any = getattr(env.unwrapped, "physics_model", None)
        if model is None:
            raise ValueError("states carry a PackedData, but the env has no physics_model to unpack it with")
        pos, quat = model.scene_mocap(data)
        return {**{k: getattr(data.physics, k) for k in _FIELDS[:3]}, "mocap_pos": pos, "mocap_quat": quat}
    return {k: getattr(data, k) for k in _FIELDS}


def _host_arrays(env: Env, states: State | Sequence[State]) -> tuple[dict[str, np.ndarray], np.ndarray, Any, dict[str, np.ndarray], bool]:
    """The fields a frame needs, as host arrays with a leading time axis, the task state (as given;
    of a list of states, stacked on the host without its PRNG keys), the observed images by key (with
    the time axis) and whether it was one state."""
    if isinstance(states, Sequence) and not isinstance(states, State):
        if not states:
            raise ValueError("states is an empty sequence; give at least one State")
        # Stacked on the host, and only what a frame reads: jnp.stack over every leaf of the states
        # compiled one small program per leaf shape (about 150 for an MJX Data) on a first render.
        picked = jax.device_get([(_frame_fields(env, s.data), s.cost, _host_leaves(s.info.get("task", {})),
                                  observation.images(s.obs)) for s in states])
        fields, cost, task, views = jax.tree.map(lambda *xs: np.stack(xs), *picked)
    else:
        fields, cost, views = jax.device_get((_frame_fields(env, states.data), states.cost, observation.images(states.obs)))
        task = states.info.get("task", {})
    ndim = np.ndim(fields["qpos"])
    if ndim not in (1, 2):
        raise ValueError(f"states has qpos of shape {np.shape(fields['qpos'])}: render takes one unbatched State or "
                         "a trajectory with one leading time axis; pick one env of a batch with "
                         "jax.tree.map(lambda x: x[i], state)")
    single = ndim == 1
    fields = {k: np.asarray(v)[None] if single else np.asarray(v) for k, v in fields.items()}
    views = {k: np.asarray(v)[None] if single else np.asarray(v) for k, v in views.items()}
    cost = np.reshape(np.asarray(cost, np.float32), (-1,))
    return fields, cost, task, views, single


def beside(frames: np.ndarray, views: dict[str, np.ndarray]) -> np.ndarray:
    """``frames`` (T, H, W, 3) with each observed image (T, h, w, c) to their right, scaled to the
    frames' height by whole pixels and centred: colour images as they are (the colour part of an
    RGB-D image), one-channel images (depth, segmentation) in grey."""
    height = frames.shape[1]
    out = [frames]
    for image in views.values():
        rgb = image[..., :3] if image.shape[-1] >= 3 else np.repeat(image[..., :1], 3, axis=-1)
        scale = max(1, height // rgb.shape[1])
        rgb = rgb.repeat(scale, axis=1).repeat(scale, axis=2)[:, :height]
        top = (height - rgb.shape[1]) // 2
        pad = ((0, 0), (top, height - rgb.shape[1] - top), (0, 0), (0, 0))
        out.append(np.pad(rgb, pad))
    return np.concatenate(out, axis=2)


def render(env: Env, states: State | Sequence[State], *, camera: str = "track", width: int = 480,
           height: int = 480, views: bool = True) -> np.ndarray:
    """RGB frames of crax states: ``(height, width, 3)`` uint8 for one unbatched ``State``,
    ``(T, height, width, 3)`` for a trajectory (a ``State`` with a leading time axis, e.g. from
    :func:`rollout`, or a list of States).

    A state from a training stack (:class:`~crax.core.env.PackedState`; one env of the batch, picked
    with ``jax.tree.map(lambda x: x[i], state)``) renders as the scene's.

    ``env`` is the env the states came from (wrappers are fine). ``camera`` is ``"track"`` or
    ``"top"`` (:data:`CAMERAS`). The agent is drawn red on frames whose ``cost > 0``. With ``views``, what
    the task's cameras observed (a dict observation's images) is placed to the right of each frame
    (:func:`beside`), so the frames are wider than ``width``.
    """
    if camera not in CAMERAS:
        raise ValueError(f"unknown camera {camera!r}; valid choices: {', '.join(CAMERAS)}")
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 1 <= v <= 4096:
            raise ValueError(f"{name} must be an integer in [1, 4096] pixels, got {v!r}")
    scene = _scene(env)
    fields, cost, task, observed, single = _host_arrays(env, states)
    m, d = scene.model, scene.data
    if fields["qpos"].shape[1] != m.nq:
        base: Any = env.unwrapped  # a crax task env: _scene checked
        raise ValueError(f"states have {fields['qpos'].shape[1]} qpos entries; {base.id} has {m.nq}: "
                         "were they produced by this env?")
    fading = {label: (scene.object_geoms[label], np.reshape(np.asarray(jax.device_get(v), np.float32), (len(cost), -1)))
              for label, v in scene.suite.visibility(task).items() if label in scene.object_geoms}
    built = {label: m.geom_rgba[ids, 3].copy() for label, (ids, _) in fading.items()}
    renderer = scene.renderer(int(width), int(height))
    frames = np.empty((len(cost), int(height), int(width), 3), np.uint8)
    for t in range(len(cost)):
        for k, v in fields.items():
            getattr(d, k)[...] = v[t]
        mujoco.mj_forward(m, d)
        m.geom_rgba[scene.agent_geoms] = COST_RGBA if cost[t] > 0 else AGENT_RGBA
        for label, (ids, fraction) in fading.items():
            m.geom_rgba[ids, 3] = built[label] * fraction[t]
        renderer.update_scene(d, camera=_camera(scene, camera, int(width), int(height)), scene_option=scene.option)
        frames[t] = renderer.render()
    for label, (ids, _) in fading.items():
        m.geom_rgba[ids, 3] = built[label]
    if views and observed:
        frames = beside(frames, observed)
    return frames[0] if single else frames


# ---- rollouts and videos --------------------------------------------------------------------------

Policy = Callable[[jax.Array, jax.Array], jax.Array]
"""``policy(obs, key) -> action`` for one unbatched observation; actions in ``[-1, 1]``."""


def rollout(env: Env, policy: Policy | None, key: jax.Array, steps: int) -> State:
    """One jitted ``lax.scan`` of ``steps`` steps from ``env.reset(key)``.

    Returns the stacked States, the reset state first: a leading time axis of ``steps + 1``.
    ``policy`` None draws uniform random actions in ``[-1, 1]``. The env is not reset when an
    episode ends (``done``); :func:`first_episode` cuts a trajectory there.
    """
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")

    def act(obs, k):
        if policy is None:
            return jax.random.uniform(k, (env.action_size,), minval=-1.0, maxval=1.0)
        return policy(obs, k)

    @xla_options.jit
    def run(key):
        k_reset, k_steps = jax.random.split(key)
        s0 = env.reset(k_reset)

        def step(s, k):
            s = env.step(s, act(s.obs, k))
            return s, s

        _, traj = jax.lax.scan(step, s0, jax.random.split(k_steps, int(steps)))
        return jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), s0, traj)

    return run(key)


def first_episode(states: State) -> State:
    """The trajectory up to and including its first step with ``done`` (all of it if none)."""
    done = np.flatnonzero(np.asarray(jax.device_get(states.done)).reshape(-1)[1:] > 0)
    end = int(done[0]) + 2 if done.size else int(np.shape(states.done)[0])
    return _head(states, end)


@functools.partial(jax.jit, static_argnums=1)
def _head(states: State, end: int) -> State:
    # one program per trajectory length; sliced leaf by leaf outside a jit, each leaf shape compiled
    # a program of its own (about 150 for an MJX Data) the first time
    return jax.tree.map(lambda x: x[:end], states)


def save_video(env: Env, states: State | Sequence[State], path: str | Path, *, fps: float | None = None,
               camera: str = "track", width: int = 480, height: int = 480, views: bool = True) -> Path:
    """Renders a trajectory (:func:`render`, with the task's camera views beside it unless ``views`` is
    False) and writes it (:func:`crax.video.write_video`); ``fps`` defaults to ``1 / env.dt``, real time."""
    frames = render(env, states, camera=camera, width=width, height=height, views=views)
    if frames.ndim == 3:
        frames = frames[None]
    return write_video(path, frames, fps if fps is not None else 1.0 / env.dt)
