"""`CraxVectorEnv`: a batch of crax envs as a `gymnasium.vector.VectorEnv` (same-step autoreset)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import jax
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from crax.env import AutoReset, Env, State, Vmap
from crax.gymnasium.env import _Adapter, action_box, host, observation_box


def _masked(done: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``value`` where ``done`` (along the first axis), zero elsewhere: Gymnasium's layout of
    entries that only the finished envs have."""
    return np.where(done.reshape(done.shape + (1,) * (value.ndim - 1)), value, np.zeros_like(value))


class CraxVectorEnv(_Adapter, gym.vector.VectorEnv):
    """``num_envs`` copies of a crax env as a Gymnasium 1.x ``VectorEnv``, stepped as one batch.

    Autoreset is **same-step** (``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``), as
    crax's own :class:`crax.env.AutoReset`, which this env runs: on the step where an env's
    episode ends, it is reset at once, the returned observation is the new episode's first one,
    and ``info["final_obs"]`` / ``info["final_info"]`` hold the finished episode's last
    observation and info, in the rows masked by ``info["_final_obs"]`` / ``info["_final_info"]``.
    These keys are present only on steps where some env finished. Unlike Gymnasium's
    ``SyncVectorEnv`` (an object array with None), ``final_obs`` is a float32 array of shape
    ``(num_envs, observation_size)`` with zero rows for the envs that did not finish; every entry
    of ``final_info`` likewise is a batched array with its own ``_<key>`` mask.

    ``rewards``, ``terminations``, ``truncations`` and ``info["cost"]`` (and every ``reward/*``,
    ``cost/*``, ``env/*`` metric in ``info``), each of shape ``(num_envs,)``, are the step's, for
    finished envs too: the cost, like the reward, belongs to the step that was taken.

    Each ``step`` is one jitted call (the vmapped step and the reset of the finished envs) and one
    transfer to the host. ``reset(seed=s)`` restarts the key sequence at ``jax.random.key(s)``
    (an int; per-env seed lists are not supported); the finished envs draw their new layouts
    from per-env keys in the state. ``render()`` renders env 0 only, as one ``(H, W, 3)`` image.
    ``state`` is the current batched crax :class:`State`.

    Args:
      env: an unbatched crax env (``crax.make(...)``, possibly wrapped).
      num_envs: number of parallel envs (>= 1).
      render_mode: None or ``"rgb_array"``.
      render_kwargs: passed to :func:`crax.render.render` (``camera``, ``width``, ``height``).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, env: Env, num_envs: int, render_mode: str | None = None,
                 render_kwargs: dict[str, Any] | None = None):
        if not isinstance(num_envs, int | np.integer) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self._setup(env, AutoReset(Vmap(env, self.num_envs)), render_mode, render_kwargs or {})
        self.single_observation_space = observation_box(env)
        self.single_action_space = action_box(env)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None and not isinstance(seed, int):
            raise ValueError(f"seed must be an int or None (one seed for the whole batch), got {seed!r}")
        super().reset(seed=seed)
        self._check_options(options)
        self.state = self._reset_fn(self._episode_key(seed))
        return host(self.state.obs), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        state = self._require_state()
        actions = self._action(actions, self.action_space.shape, "(num_envs, action_size)")
        s = self.state = self._step_fn(state, actions)
        obs, reward, cost, done, truncation, metrics, final_obs = host(
            (s.obs, s.reward, s.cost, s.done, s.truncation, s.metrics, s.info["final_obs"]))
        done = done > 0
        truncated = truncation > 0
        info: dict[str, Any] = {"cost": cost, **metrics}
        if done.any():
            final = {k: _masked(done, v) for k, v in info.items()}
            final.update({f"_{k}": done.copy() for k in info})
            info.update(final_obs=_masked(done, final_obs), _final_obs=done.copy(),
                        final_info=final, _final_info=done.copy())
        return obs, reward, done & ~truncated, truncated, info

    def _render_state(self) -> State:
        return jax.tree.map(lambda x: x[0], self._require_state())
