"""`CraxVectorEnv`: a batch of crax envs as a `gymnasium.vector.VectorEnv` (next- or same-step autoreset)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

import gymnasium as gym
import jax
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from crax.core.batch import BATCH_AXIS, map_per_env
from crax.core.env import Env, State
from crax.devices import xla_options
from crax.gymnasium.autoreset import AUTORESET_MODES, batched_stack, check_autoreset_mode
from crax.gymnasium.env import _MAX_SEED, _Adapter, action_box, as_space, host, observation_space


def _masked(done: np.ndarray, value: Any) -> Any:
    """``value`` (an array or a dict of them) where ``done`` (along the first axis), zero elsewhere:
    Gymnasium's layout of entries that only the finished envs have."""
    if isinstance(value, dict):
        return {k: _masked(done, v) for k, v in value.items()}
    return np.where(done.reshape(done.shape + (1,) * (value.ndim - 1)), value, np.zeros_like(value))


class CraxVectorEnv(_Adapter, gym.vector.VectorEnv):
    """``num_envs`` copies of a crax env as a Gymnasium 1.x ``VectorEnv``, stepped as one batch.

    ``autoreset_mode`` (``metadata["autoreset_mode"]``) is Gymnasium's:

    - ``AutoresetMode.NEXT_STEP`` (the default, the mode every Gymnasium vector wrapper accepts):
      the step where an env's episode ends returns that episode's last observation; the next
      ``step`` resets the env instead of stepping it (its action is ignored) and returns the new
      episode's first observation with reward 0, cost 0 and ``terminated``/``truncated`` False.
      The new episode is the one same-step mode starts, one call later.
    - ``AutoresetMode.SAME_STEP`` (crax's own :class:`crax.core.env.AutoReset`): on the step where an
      env's episode ends it is reset at once, the returned observation is the new episode's first
      one, and ``info["final_obs"]`` / ``info["final_info"]`` hold the finished episode's last
      observation and info, in the rows masked by ``info["_final_obs"]`` / ``info["_final_info"]``.
      These keys are present only on steps where some env finished. Unlike Gymnasium's
      ``SyncVectorEnv`` (an object array with None), ``final_obs`` is a float32 array of shape
      ``(num_envs, observation_size)`` with zero rows for the envs that did not finish; every
      entry of ``final_info`` likewise is a batched array with its own ``_<key>`` mask.

    ``rewards``, ``terminations``, ``truncations`` and ``info["cost"]`` (and every ``reward/*``,
    ``cost/*``, ``env/*`` metric in ``info``), each of shape ``(num_envs,)``, are the step's, for
    finished envs too: the cost, like the reward, belongs to the step that was taken.

    Each ``step`` is one jitted call (the vmapped step and the reset of the finished envs) and one
    transfer to the host. ``reset(seed=s)`` restarts the key sequence at ``jax.random.key(s)``;
    ``reset(seed=[s_0, ..., s_{n-1}])`` starts env ``i`` as a one-env ``CraxVectorEnv`` reset
    with ``seed=s_i`` starts its env. Later episodes draw their layouts from per-env keys in the
    state. ``render()`` returns one ``(H, W, 3)`` image per env (a tuple, as Gymnasium's vector
    envs). ``state`` is the current batched crax :class:`State`.

    Args:
      env: an unbatched crax env (``crax.make(...)``, possibly wrapped).
      num_envs: number of parallel envs (>= 1).
      render_mode: None or ``"rgb_array"``.
      render_kwargs: passed to :func:`crax.render.render` (``camera``, ``width``, ``height``).
      autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``AutoresetMode.SAME_STEP`` (also
        their values ``"NextStep"``/``"SameStep"``).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AUTORESET_MODES[0]}

    def __init__(self, env: Env, num_envs: int, render_mode: str | None = None,
                 render_kwargs: dict[str, Any] | None = None, autoreset_mode: AutoresetMode | str = AUTORESET_MODES[0]):
        if not isinstance(num_envs, int | np.integer) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        mode = check_autoreset_mode(autoreset_mode)
        self.num_envs = int(num_envs)
        self._setup(env, batched_stack(env, self.num_envs, mode), render_mode, render_kwargs or {})
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.single_observation_space = observation_space(env)
        self.single_action_space = action_box(env)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        seeds = self._seed_list(seed)
        seed = None if seed is None or seeds else int(cast(int, seed))  # _seed_list found one int
        super().reset(seed=seed)
        self._check_options(options)
        if seeds:
            keys = [self._episode_key(s) for s in seeds]
            # each seed restarts the key sequence: later unseeded resets go on from the last seed's
            self.state = self._reset_each(jax.numpy.stack(keys))
        else:
            self.state = self._reset_fn(self._episode_key(seed))
        return as_space(host(self.state.obs), self.single_observation_space), {}

    def _seed_list(self, seed: Any) -> list[int] | None:
        """The per-env seeds of ``reset(seed=...)``, None for one seed or none; ValueError otherwise."""
        if seed is None or isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            return None
        if isinstance(seed, Sequence | np.ndarray) and not isinstance(seed, str):
            seeds = list(seed)
            if len(seeds) == self.num_envs and all(
                    isinstance(s, int | np.integer) and not isinstance(s, bool) and 0 <= s < _MAX_SEED for s in seeds):
                return [int(s) for s in seeds]
        raise ValueError(f"seed must be None, an int in [0, 2**63) or a list of {self.num_envs} such ints "
                         f"(one per env); got {seed!r}")

    @functools.cached_property
    def _reset_each(self) -> Callable[[jax.Array], State]:
        """Resets env i from key i as a one-env stack would: the one-env reset vmapped over the keys."""
        one = batched_stack(self.env, 1, self.autoreset_mode)

        def reset(keys: jax.Array) -> State:
            return map_per_env(lambda x: x[:, 0], jax.vmap(one.reset, axis_name=BATCH_AXIS)(keys))

        return xla_options.jit(reset)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        state = self._require_state()
        actions = self._action(actions, self.action_space.shape, "(num_envs, action_size)")
        s = self.state = self._step_fn(state, actions)
        same_step = self.autoreset_mode is AutoresetMode.SAME_STEP
        obs, reward, cost, done, truncation, metrics, final_obs = host(
            (s.obs, s.reward, s.cost, s.done, s.truncation, s.metrics, s.info["final_obs"] if same_step else None))
        done = done > 0
        truncated = truncation > 0
        space = self.single_observation_space
        obs = as_space(obs, space)
        info: dict[str, Any] = {"cost": cost, **metrics}
        if same_step and done.any():
            final = {k: _masked(done, v) for k, v in info.items()}
            final.update({f"_{k}": done.copy() for k in info})
            info.update(final_obs=_masked(done, as_space(final_obs, space)), _final_obs=done.copy(),
                        final_info=final, _final_info=done.copy())
        return obs, reward, done & ~truncated, truncated, info

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One ``(H, W, 3)`` uint8 image per env, of the current states (``render_mode="rgb_array"``), else None."""
        frames = super().render()
        return None if frames is None else tuple(frames)
