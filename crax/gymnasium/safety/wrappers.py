"""``safety_gymnasium.wrappers`` for crax envs: the 6-tuple step, autoreset, time limit and the
conversions to and from Gymnasium's 5-tuple."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

__all__ = [
    "Gymnasium2SafetyGymnasium", "SafeAutoResetWrapper", "SafeTimeLimit", "SafetyGymnasium2Gymnasium",
    "SafetyGymnasiumVectorWrapper", "SafetyGymnasiumWrapper", "with_gymnasium_wrappers",
]

_NOT_OFFERED = {
    "SafePassiveEnvChecker": "crax envs pass Gymnasium's env checker (gymnasium.utils.env_checker.check_env); "
                             "drop the wrapper",
}


def __getattr__(name: str) -> Any:
    if name in _NOT_OFFERED:
        raise AttributeError(f"crax.gymnasium.safety.wrappers has no {name}: {_NOT_OFFERED[name]}")
    raise AttributeError(f"crax.gymnasium.safety.wrappers has no {name!r}; it offers {', '.join(__all__)}")


def _safety_gym_info(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """``info`` plus Safety-Gymnasium's own cost keys where ``env`` runs one of its tasks
    (:mod:`crax.suites.safety_gym`): ``cost_<term>``, each term's indicator, and ``cost_sum``,
    the step cost, as Safety-Gymnasium's ``info`` holds them (``cost/<term>`` keep the raw values)."""
    suite = getattr(getattr(env.unwrapped, "env", None), "suite", None)
    if not getattr(suite, "cost_indicator", False):
        return info
    terms = {f"cost_{k.removeprefix('cost/')}": (np.asarray(v) > 0).astype(np.float64) * 1.0
             for k, v in info.items() if k.startswith("cost/")}
    terms = {k: float(v) if np.ndim(v) == 0 else v for k, v in terms.items()}
    return {**info, **terms, "cost_sum": info["cost"]}


class SafetyGymnasiumWrapper(gym.Wrapper):
    """A :class:`crax.gymnasium.CraxEnv` whose ``step`` returns Safety-Gymnasium's 6-tuple
    ``(obs, reward, cost, terminated, truncated, info)``; ``cost`` is ``info["cost"]``, a float.
    For Safety-Gymnasium's own tasks ``info`` also has its keys ``cost_<term>`` and ``cost_sum``."""

    def step(self, action: Any) -> tuple[Any, SupportsFloat, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, info["cost"], terminated, truncated, _safety_gym_info(self.env, info)


Gymnasium2SafetyGymnasium = SafetyGymnasiumWrapper
"""Safety-Gymnasium's name for the 5-tuple -> 6-tuple conversion (the cost read from ``info["cost"]``)."""


class SafetyGymnasiumVectorWrapper(gym.vector.VectorWrapper):
    """A :class:`crax.gymnasium.CraxVectorEnv` whose ``step`` returns Safety-Gymnasium's
    ``(obs, rewards, costs, terminations, truncations, infos)``; ``costs`` is ``infos["cost"]``,
    shape ``(num_envs,)``. With same-step autoreset, ``infos["final_observation"]`` (and its
    ``_final_observation`` mask), the name Safety-Gymnasium's vector envs use, is ``infos["final_obs"]``."""

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        if "final_obs" in infos:
            infos.update(final_observation=infos["final_obs"], _final_observation=infos["_final_obs"])
        return obs, rewards, infos["cost"], terminations, truncations, _safety_gym_info(self.env, infos)


class SafetyGymnasium2Gymnasium(gym.Wrapper):
    """A 6-tuple (Safety-Gymnasium) env as a Gymnasium env: ``step`` returns ``(obs, reward,
    terminated, truncated, info)`` with the cost in ``info["cost"]``, so Gymnasium's wrappers apply."""

    env: Any  # a 6-tuple (Safety-Gymnasium) env, whose step gym.Env's types do not describe

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, cost, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "cost": cost}


def with_gymnasium_wrappers(env: gym.Env, *wrappers: Callable[[gym.Env], gym.Env]) -> gym.Env:
    """``env`` (a 6-tuple env) with Gymnasium ``wrappers`` applied in order, and the 6-tuple step kept."""
    for wrapper in (SafetyGymnasium2Gymnasium, *wrappers, Gymnasium2SafetyGymnasium):
        if not callable(wrapper):
            raise TypeError(f"wrapper {wrapper!r} is not callable: give wrapper classes or functools.partial of them")
        env = wrapper(env)
    return env


class SafeAutoResetWrapper(gym.Wrapper):
    """Same-step autoreset of a 6-tuple env, as Safety-Gymnasium's: on the step where an episode
    ends, the env is reset and returns the new episode's first observation, with the finished
    step's reward, cost, terminated and truncated, and the reset's info plus
    ``final_observation`` and ``final_info`` (the finished step's observation and info)."""

    env: Any  # a 6-tuple (Safety-Gymnasium) env, whose step gym.Env's types do not describe

    def step(self, action: Any) -> tuple[Any, float, float, bool, bool, dict[str, Any]]:
        obs, reward, cost, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            new_obs, new_info = self.env.reset()
            obs, info = new_obs, {**new_info, "final_observation": obs, "final_info": info}
        return obs, reward, cost, terminated, truncated, info


class SafeTimeLimit(gym.Wrapper):
    """Truncates a 6-tuple env's episodes after ``max_episode_steps`` steps (crax's own time limit,
    the ``episode_length`` parameter, still ends them at its length if that is shorter)."""

    env: Any  # a 6-tuple (Safety-Gymnasium) env, whose step gym.Env's types do not describe

    def __init__(self, env: gym.Env, max_episode_steps: int):
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be an integer >= 1, got {max_episode_steps!r}")
        super().__init__(env)
        self.max_episode_steps = max_episode_steps
        self._elapsed = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._elapsed = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, float, bool, bool, dict[str, Any]]:
        obs, reward, cost, terminated, truncated, info = self.env.step(action)
        self._elapsed += 1
        return obs, reward, cost, terminated, truncated or self._elapsed >= self.max_episode_steps, info
