"""`CraxEnv`: one crax env as a `gymnasium.Env`, and what it shares with the vector env."""

from __future__ import annotations

import collections
import math
import sys
from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
import jax
import numpy as np

from crax.core import observation
from crax.core.env import Env, State
from crax.devices import xla_options

RENDER_MODES = ("rgb_array",)
"""The render modes the adapters accept (besides None)."""

_MAX_SEED = 2**63
"""``jax.random.key`` takes a seed below this."""


def check_render_mode(render_mode: str | None) -> None:
    """Raises ValueError unless ``render_mode`` is None or one of :data:`RENDER_MODES`."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}; got {render_mode!r}")


def _declared_spaces(env: Env) -> dict[str, Any] | None:
    """The spaces a task declares itself (Safety-Gymnasium's tasks: its bounds and float64), or None."""
    declare = getattr(getattr(env, "suite", None), "gymnasium_spaces", None)
    return cast(dict[str, Any], declare()) if callable(declare) else None


def observation_space(env: Env) -> gym.spaces.Box | gym.spaces.Dict:
    """``Box(-inf, inf, (observation_size,), float32)``, or the bounds and dtype the task declares
    (Safety-Gymnasium's tasks: its own space; observations are then cast to that dtype). A task with a
    camera: a ``Dict`` of that box under ``"state"`` and a ``Box(0, 255, (H, W, C), uint8)`` per image,
    or, where the task lays out its state vector by key (``observation_keys``: Safety-Gymnasium's Vision
    tasks), a ``Dict`` of those parts and the images."""
    declared = _declared_spaces(env)
    spec = env.observation_spec
    images = {k: gym.spaces.Box(0, 255, tuple(v.shape), np.uint8) for k, v in observation.images(spec).items()}
    if declared is None:
        vector = gym.spaces.Box(-np.inf, np.inf, (observation.state_size(spec),), np.float32)
        return gym.spaces.Dict({observation.STATE: vector, **images}) if images else vector
    low, high, dtype = declared["obs_low"], declared["obs_high"], declared["dtype"]
    if "observation_keys" not in declared:
        return gym.spaces.Box(low, high, dtype=dtype)
    parts, offset = {}, 0  # the task's own layout of the state vector (Safety-Gymnasium's Vision keys)
    for key, shape in declared["observation_keys"]:
        size = math.prod(shape)
        parts[key] = gym.spaces.Box(low[offset:offset + size].reshape(shape), high[offset:offset + size].reshape(shape),
                                    dtype=dtype)
        offset += size
    return gym.spaces.Dict(collections.OrderedDict({**parts, **images}))  # ordered: gymnasium sorts a dict's keys


def as_space(obs: Any, space: gym.spaces.Space) -> Any:
    """A host observation (an array, or a dict of them) in ``space``'s dtypes (the state vector cast to a
    declared float64, say; images stay uint8); a ``Dict`` space without ``"state"`` takes the state
    vector's parts under its own keys, in order (:func:`observation_space`)."""
    if isinstance(space, gym.spaces.Dict):
        if observation.STATE in space.spaces:
            return {k: as_space(obs[k], sub) for k, sub in space.spaces.items()}
        out, offset, vector = {}, 0, observation.state(obs)  # the state vector laid out over the task's keys
        for key, sub in space.spaces.items():
            if key in obs:
                out[key] = as_space(obs[key], sub)
                continue
            shape = tuple(sub.shape or ())
            size = math.prod(shape)
            part = vector[..., offset:offset + size]
            out[key] = as_space(part.reshape(*part.shape[:-1], *shape), sub)
            offset += size
        return out
    return obs.astype(space.dtype, copy=False)


def action_box(env: Env) -> gym.spaces.Box:
    """``Box(-1, 1, (action_size,), float32)``, or the bounds and dtype the task declares
    (Safety-Gymnasium's velocity tasks: the actuators' ``ctrlrange``; see :func:`action_scale`)."""
    declared = _declared_spaces(env)
    if declared is not None and "action_low" in declared:
        return gym.spaces.Box(declared["action_low"], declared["action_high"], dtype=declared["action_dtype"])
    dtype = np.float32 if declared is None else declared["dtype"]
    return gym.spaces.Box(-1.0, 1.0, (env.action_size,), dtype)


def action_scale(env: Env) -> tuple[np.ndarray, np.ndarray] | None:
    """(centre, half-width) of a declared action box that is not [-1, 1]: the adapters map an
    action ``a`` of that box onto crax's ``(a − centre) / half-width``; None for [-1, 1]."""
    box = action_box(env)
    centre, half = (box.high + box.low) / 2, (box.high - box.low) / 2
    if np.all(centre == 0) and np.all(half == 1):
        return None
    return centre.astype(np.float32), half.astype(np.float32)


def host(tree: Any) -> Any:
    """Fresh, writable numpy copies of a pytree of device arrays (one ``device_get`` for all)."""
    return jax.tree.map(np.array, jax.device_get(tree))


class _Adapter:
    """What the single and the vector env share: the crax env, its jitted reset and step, the key
    sequence, action checking and rendering. ``state`` is the current crax :class:`State`."""

    env: Env
    state: State | None
    np_random: np.random.Generator
    _reset_fn: Callable[[jax.Array], State]
    _step_fn: Callable[[State, Any], State]

    def _setup(self, env: Env, step_env: Env, render_mode: str | None, render_kwargs: dict[str, Any]) -> None:
        check_render_mode(render_mode)
        self.env = env
        self.render_mode = render_mode
        self.render_kwargs = dict(render_kwargs)
        self.metadata = {**self.metadata, "render_modes": list(RENDER_MODES), "render_fps": round(1.0 / env.dt)}
        self._reset_fn = xla_options.jit(step_env.reset)
        self._step_fn = xla_options.jit(step_env.step)
        self._key: jax.Array | None = None
        self._action_scale = action_scale(env)
        self.state = None

    def _episode_key(self, seed: int | None) -> jax.Array:
        """The key of the next reset: a seed restarts the key sequence at ``jax.random.key(seed)``;
        without one the sequence goes on (its first key is drawn from ``np_random``)."""
        if seed is not None:
            if not 0 <= seed < _MAX_SEED:
                raise ValueError(f"seed must be an int in [0, 2**63), got {seed!r}")
            self._key = jax.random.key(seed)
        elif self._key is None:
            self._key = jax.random.key(int(self.np_random.integers(_MAX_SEED // 2)))
        self._key, key = jax.random.split(self._key)
        return key

    @staticmethod
    def _check_options(options: dict[str, Any] | None) -> None:
        if options:
            raise ValueError(f"reset options {sorted(options)} are not supported: crax envs take no reset options")

    def _action(self, action: Any, shape: tuple[int, ...] | None, what: str) -> np.ndarray:
        a = np.asarray(action, dtype=np.float32)
        if a.shape != shape:
            raise ValueError(f"action has shape {a.shape}; {getattr(self.env, 'id', 'the env')} expects {shape} {what}")
        if self._action_scale is not None:
            centre, half = self._action_scale
            a = (a - centre) / half
        return a

    def _require_state(self) -> State:
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before step() or render()")
        return self.state

    def _render_state(self) -> State:
        return self._require_state()

    def render(self) -> np.ndarray | None:
        """The current state as an ``(H, W, 3)`` uint8 image (``render_mode="rgb_array"``), else None."""
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render mode; make the env with render_mode='rgb_array'")
            return None
        from crax.render import render  # imported here: rendering needs an OpenGL context

        return render(self.env, self._render_state(), **self.render_kwargs)

    def close(self, **kwargs: Any) -> None:
        """Frees the renderer (and its GL context) if this env rendered."""
        render = sys.modules.get("crax.render")
        if self.render_mode is not None and render is not None:
            render.close(self.env)
        super().close(**kwargs)  # pyright: ignore[reportAttributeAccessIssue]  (gym.Env's or VectorEnv's, next in the MRO)


class CraxEnv(_Adapter, gym.Env):
    """A crax env (unbatched) as a ``gymnasium.Env``.

    Observations are float32 arrays in a ``Box(-inf, inf, (observation_size,))`` (a ``Dict`` of it and
    uint8 images for a task with a camera: :func:`observation_space`), actions a
    ``Box(-1, 1, (action_size,))``. ``step`` returns numpy values and Python scalars:
    ``terminated`` is crax's ``done`` without ``truncation`` (the time limit), and ``info``
    holds ``cost`` (the step's cost) and every metric of the step (``reward/<term>``,
    ``cost/<term>``, ``env/...``). Each call runs one jitted ``env.step`` (compiled on the first
    call) and copies its results to the host in one transfer.

    ``reset(seed=s)`` restarts the env's key sequence at ``jax.random.key(s)``; a reset without a
    seed draws the next key of the sequence (the first one from ``np_random``), so a seeded reset
    followed by unseeded ones repeats exactly. ``state`` is the current crax :class:`State`.

    Args:
      env: an unbatched crax env (``crax.make(...)``, possibly wrapped).
      render_mode: None or ``"rgb_array"`` (:func:`crax.render.render` of the current state).
      render_kwargs: passed to :func:`crax.render.render` (``camera``, ``width``, ``height``).
    """

    metadata: dict[str, Any] = {}

    def __init__(self, env: Env, render_mode: str | None = None, render_kwargs: dict[str, Any] | None = None):
        self._setup(env, env, render_mode, render_kwargs or {})
        self.observation_space = observation_space(env)
        self.action_space = action_box(env)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._check_options(options)
        self.state = self._reset_fn(self._episode_key(seed))
        return as_space(host(self.state.obs), self.observation_space), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self._require_state()
        action = self._action(action, self.action_space.shape, "(action_size,)")
        s = self.state = self._step_fn(state, action)
        obs, reward, cost, done, truncation, metrics = host((s.obs, s.reward, s.cost, s.done, s.truncation, s.metrics))
        info = {"cost": float(cost), **{k: v.item() if v.ndim == 0 else v for k, v in metrics.items()}}
        truncated = bool(truncation > 0)
        obs = as_space(obs, self.observation_space)
        return obs, float(reward), bool(done > 0) and not truncated, truncated, info
