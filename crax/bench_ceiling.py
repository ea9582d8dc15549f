"""The C MuJoCo ceiling of ``crax bench``: MuJoCo's own threaded batched rollout of an env's model.

``mujoco.rollout`` steps the env's compiled physics model (``env.physics_model.mj_model``: the scene
without its inert bodies, :mod:`crax.core.physics_model`; what the env's MJX step runs) in C,
one thread per core, from the same batch of states the crax bench starts from, under random
actions drawn as the crax bench draws them and held for each env step's ``frame_skip`` physics
steps. Its rate, in env steps/s, is what the physics alone costs on the host's CPU cores without
JAX: the figure crax's env steps/s are compared with.
"""

from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Any

import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.physics_model import PackedData
from crax.suites.task_env import TaskEnv

FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS
# What each physics step sets besides the state: the controls, and the mocap bodies (the layout's
# hazards, goals and props), which the rollout would otherwise reset to the model's defaults.
# mj_getState lays the parts out in bit order: ctrl first, then mocap_pos, then mocap_quat.
CONTROL = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_MOCAP_POS | mujoco.mjtState.mjSTATE_MOCAP_QUAT
MEMORY = 64 << 20
"""Bytes of control and state buffers per rollout call; a larger batch is rolled out in groups of envs."""


def unavailable() -> str | None:
    """Why this MuJoCo cannot measure the ceiling (no ``mujoco.rollout.Rollout``), or None if it can."""
    try:
        from mujoco import rollout
    except ImportError as e:
        return f"mujoco {mujoco.__version__} has no mujoco.rollout ({e})"
    if not hasattr(rollout, "Rollout"):
        return f"mujoco {mujoco.__version__}'s mujoco.rollout has no Rollout (its threaded rollout, MuJoCo 3.3 and later)"
    return None


def env_steps_per_s(physics_steps: int, frame_skip: int, seconds: float) -> float:
    """Env steps/s of ``physics_steps`` physics steps taken in ``seconds``: an env step is ``frame_skip`` of them."""
    return physics_steps / frame_skip / seconds


def full_states(model: mujoco.MjModel, data: Any) -> np.ndarray:
    """The ``mjSTATE_FULLPHYSICS`` vectors (N, nstate) of a batch of MJX data: time, qpos, qvel, act.

    Parts MJX does not carry (history, plugin and plastic state) keep ``mj_resetData``'s values.
    """
    time_, qpos, qvel, act = (np.asarray(getattr(data, k), np.float64) for k in ("time", "qpos", "qvel", "act"))
    d = mujoco.MjData(model)
    out = np.empty((qpos.shape[0], mujoco.mj_stateSize(model, FULL)))
    for i in range(qpos.shape[0]):
        mujoco.mj_resetData(model, d)
        d.time, d.qpos[:], d.qvel[:], d.act[:] = time_[i], qpos[i], qvel[i], act[i]
        mujoco.mj_getState(model, d, out[i], FULL)
    return out


def user_inputs(model: mujoco.MjModel, data: Any, mocap: np.ndarray | None = None) -> np.ndarray:
    """The ``CONTROL`` vectors (N, ncontrol) of a batch of MJX data: zero ctrl, the batch's mocap poses
    (those of the mocap bodies ``mocap`` of ``data``'s model, for a ``model`` that has only them)."""
    pos, quat = (np.asarray(getattr(data, k), np.float64) for k in ("mocap_pos", "mocap_quat"))
    if mocap is not None:
        pos, quat = pos[:, mocap], quat[:, mocap]
    d = mujoco.MjData(model)
    out = np.empty((pos.shape[0], mujoco.mj_stateSize(model, CONTROL)))
    for i in range(pos.shape[0]):
        d.ctrl[:] = 0.0
        d.mocap_pos[:], d.mocap_quat[:] = pos[i], quat[i]
        mujoco.mj_getState(model, d, out[i], CONTROL)
    return out


class Ceiling:
    """C MuJoCo's threaded rollout of an env's model from a batch of the env's MJX states.

    Every env is rolled ``steps`` env steps (``steps × frame_skip`` physics steps) from its state
    (full physics state, warm-start accelerations and mocap poses taken from ``data``, a batch of
    the scene's ``Data`` or of a training stack's :class:`~crax.core.physics_model.PackedData`), with the
    actions ``actions`` (N, steps, action_size) in [-1, 1] (default: uniform, as the crax bench draws
    them) mapped to controls by the body's ``ctrl`` and held for each env step. ``threads`` defaults
    to one per core. Use as a context manager, or call :meth:`close`, to stop the thread pool.

    The model is the one the env steps, its physics model (:mod:`crax.core.physics_model`); ``whole_scene``
    rolls out the scene's model instead, inert bodies included (the same trajectories, for comparison).
    """

    def __init__(self, env: TaskEnv, data: Any, steps: int, *, actions: np.ndarray | None = None,
                 threads: int | None = None, seed: int = 0, whole_scene: bool = False):
        from mujoco import rollout

        physics = env.physics_model
        if isinstance(data, PackedData):  # a training stack's state (crax.core.env.PackedState)
            pos, quat = physics.scene_mocap(data)
            data = SimpleNamespace(**{k: getattr(data.physics, k) for k in ("time", "qpos", "qvel", "act", "qacc_warmstart")},
                                   mocap_pos=pos, mocap_quat=quat)
        self.model = env.mj_model if whole_scene else physics.mj_model
        self.frame_skip, self.steps = env.body.frame_skip, steps
        self.threads = threads or os.cpu_count() or 1
        self.state0 = full_states(self.model, data)
        self.warmstart0 = np.asarray(data.qacc_warmstart, np.float64)
        self.inputs = user_inputs(self.model, data, None if whole_scene else physics.kept("mocap"))
        n = self.state0.shape[0]
        if actions is None:
            actions = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, steps, env.action_size))
        self.ctrl = np.asarray(env.body.ctrl(jnp.asarray(actions)), np.float64)
        if self.ctrl.shape[:2] != (n, steps):
            raise ValueError(f"actions have shape {np.shape(actions)}; expected ({n}, {steps}, {env.action_size})")
        nstep, nstate, ncontrol = steps * self.frame_skip, self.state0.shape[1], self.inputs.shape[1]
        per_env = nstep * (nstate + ncontrol) * 8
        self.group = min(n, max(4 * self.threads, MEMORY // per_env))
        self._control = np.empty(self.group * nstep * ncontrol)
        self._state = np.empty(self.group * nstep * nstate)
        self._data = [mujoco.MjData(self.model) for _ in range(self.threads)]
        self._pool = rollout.Rollout(nthread=self.threads)

    def run(self) -> tuple[np.ndarray, float]:
        """Rolls every env out once: (final full physics states (N, nstate), seconds spent in the rollout calls)."""
        nstep, (n, nstate), ncontrol = self.steps * self.frame_skip, self.state0.shape, self.inputs.shape[1]
        nu = self.ctrl.shape[2]
        final = np.empty_like(self.state0)
        seconds = 0.0
        for lo in range(0, n, self.group):
            hi = min(n, lo + self.group)
            g = hi - lo
            control = self._control[: g * nstep * ncontrol].reshape(g, nstep, ncontrol)
            control[:] = self.inputs[lo:hi, None, :]
            control[:, :, :nu] = np.repeat(self.ctrl[lo:hi], self.frame_skip, axis=1)
            state = self._state[: g * nstep * nstate].reshape(g, nstep, nstate)
            t = time.perf_counter()
            self._pool.rollout([self.model] * g, self._data, self.state0[lo:hi], control, control_spec=int(CONTROL),
                               skip_checks=True, nstep=nstep, initial_warmstart=self.warmstart0[lo:hi], state=state)
            seconds += time.perf_counter() - t
            final[lo:hi] = state[:, -1]
        return final, seconds

    def physics_steps(self, final: np.ndarray) -> np.ndarray:
        """Physics steps each env took to reach ``final`` (its time over the model's timestep).

        A rollout that meets a MuJoCo warning (e.g. unstable accelerations) stops there and keeps
        its time, so its steps are counted, not assumed.
        """
        return np.rint((final[:, 0] - self.state0[:, 0]) / self.model.opt.timestep).astype(np.int64)

    def timed(self) -> tuple[float, int]:
        """(env steps/s of one :meth:`run`, number of envs whose rollout stopped early on a MuJoCo warning)."""
        final, seconds = self.run()
        taken = self.physics_steps(final)
        stopped = int(np.sum(taken < self.steps * self.frame_skip))
        return env_steps_per_s(int(taken.sum()), self.frame_skip, seconds), stopped

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> Ceiling:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["Ceiling", "env_steps_per_s", "full_states", "unavailable", "user_inputs"]
