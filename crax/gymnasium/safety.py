"""Safety-Gymnasium's step, ``(obs, reward, cost, terminated, truncated, info)``, for crax envs.

Code written for ``safety_gymnasium`` runs with one import changed::

    from crax.gymnasium import safety as safety_gymnasium

    env = safety_gymnasium.make("SafetyPointGoal1-v0")      # crax's PointGoal1
    obs, info = env.reset(seed=0)
    obs, reward, cost, terminated, truncated, info = env.step(env.action_space.sample())
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym


class SafetyGymnasiumWrapper(gym.Wrapper):
    """A :class:`crax.gymnasium.CraxEnv` whose ``step`` returns Safety-Gymnasium's 6-tuple
    ``(obs, reward, cost, terminated, truncated, info)``; ``cost`` is ``info["cost"]``, a float."""

    def step(self, action: Any) -> tuple[Any, float, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, info["cost"], terminated, truncated, info


class SafetyGymnasiumVectorWrapper(gym.vector.VectorWrapper):
    """A :class:`crax.gymnasium.CraxVectorEnv` whose ``step`` returns Safety-Gymnasium's
    ``(obs, rewards, costs, terminations, truncations, infos)``; ``costs`` is ``infos["cost"]``,
    shape ``(num_envs,)``."""

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        return obs, rewards, infos["cost"], terminations, truncations, infos


def crax_id(env_id: str) -> str:
    """The crax id of a Safety-Gymnasium-style id (``SafetyPointGoal1-v0`` -> ``PointGoal1``);
    any other string is returned unchanged."""
    match = re.fullmatch(r"Safety(\w+?)(?:-v\d+)?", env_id) if isinstance(env_id, str) else None
    return match.group(1) if match else env_id


def make(env_id: str, num_envs: int = 1, render_mode: str | None = None, **kwargs: Any):
    """:func:`crax.gymnasium.make` with ``safety_gymnasium=True``; also takes Safety-Gymnasium-style
    ids (``SafetyPointGoal1-v0`` is crax's ``PointGoal1``, a crax task, not Safety-Gymnasium's)."""
    from crax.gymnasium import make as make_gymnasium

    return make_gymnasium(crax_id(env_id), num_envs, render_mode, safety_gymnasium=True, **kwargs)
