"""A Stable-Baselines3 ``VecEnv`` over a batch of crax envs (the ``sb3`` extra).

    from stable_baselines3 import PPO
    import crax.gymnasium.sb3

    venv = crax.gymnasium.sb3.make("PointGoal1", num_envs=16)
    PPO("MlpPolicy", venv).learn(100_000)

Needs ``stable-baselines3`` (``pip install crax[sb3]``; install a CPU or CUDA ``torch`` first, as
you want it). SB3 itself is imported when this module is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv  # pyright: ignore[reportMissingImports]  # the sb3 extra, absent from dev

import crax
from crax.core.env import Env
from crax.gymnasium.vector import CraxVectorEnv

__all__ = ["CraxSB3VecEnv", "make"]


class CraxSB3VecEnv(VecEnv):
    """``num_envs`` copies of a crax env as an SB3 ``VecEnv``: each ``step_wait`` is one jitted
    batched step and one host transfer (a :class:`crax.gymnasium.CraxVectorEnv` with same-step
    autoreset underneath, ``venv``).

    SB3's layout: ``dones`` is ``terminated | truncated``; a finished env's info holds
    ``terminal_observation`` (its episode's last observation; the returned one is the new
    episode's first) and ``TimeLimit.truncated``. Every env's info holds ``cost``, the step's
    cost. ``seed(s)`` seeds env ``i`` with ``s + i`` at the next ``reset`` (SB3's convention,
    through ``CraxVectorEnv.reset(seed=[...])``). ``get_attr`` reads the vector env's attribute
    (the same for every env); per-env ``env_method`` and ``set_attr`` on part of the envs are refused.

    Args:
      env: an unbatched crax env (``crax.make(...)``, possibly wrapped).
      num_envs: parallel envs (>= 1).
      render_mode: None or ``"rgb_array"`` (``get_images`` returns one frame per env).
      render_kwargs: passed to :func:`crax.render.render` (``camera``, ``width``, ``height``).
    """

    def __init__(self, env: Env, num_envs: int, render_mode: str | None = None,
                 render_kwargs: dict[str, Any] | None = None):
        self.venv = CraxVectorEnv(env, num_envs, render_mode, render_kwargs, AutoresetMode.SAME_STEP)
        self._actions: np.ndarray | None = None
        super().__init__(self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space)

    def reset(self) -> np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else self._seeds
        if seeds is not None and any(s is None for s in seeds):
            raise ValueError(f"seeds {seeds}: seed every env or none (crax resets the batch together)")
        if any(self._options):
            raise ValueError(f"reset options {self._options} are not supported: crax envs take no reset options")
        obs, _ = self.venv.reset(seed=cast("list[int] | None", seeds))  # None or every env seeded (checked above)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{"cost": c} for c in info["cost"].tolist()]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards, dones, infos

    def close(self) -> None:
        self.venv.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.venv.render()
        return [None] * self.num_envs if frames is None else list(frames)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.venv, attr_name)] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        if sorted(list(self._get_indices(indices))) != list(range(self.num_envs)):
            raise ValueError(f"set_attr({attr_name!r}) on some envs: crax's envs are one batched env; set it for all")
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        raise NotImplementedError(f"env_method({method_name!r}): crax's envs are one batched env with no per-env "
                                  "objects; use venv (the CraxVectorEnv) directly")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))


def make(env_id: str, num_envs: int, render_mode: str | None = None, **params: Any) -> CraxSB3VecEnv:
    """The crax env ``env_id`` (``**params`` go to :func:`crax.make`) as a :class:`CraxSB3VecEnv`."""
    return CraxSB3VecEnv(crax.make(env_id, **params), num_envs, render_mode)
