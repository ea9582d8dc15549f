"""Safety-Gymnasium's step, ``(obs, reward, cost, terminated, truncated, info)``, for crax envs.

Code written for ``safety_gymnasium`` runs with one import changed::

    from crax.gymnasium import safety as safety_gymnasium

    env = safety_gymnasium.make("SafetyPointGoal1-v0")      # Safety-Gymnasium's PointGoal1, served by crax
    obs, info = env.reset(seed=0)
    obs, reward, cost, terminated, truncated, info = env.step(env.action_space.sample())

    envs = safety_gymnasium.vector.make("SafetyPointGoal1-v0", num_envs=8)   # one batched env
    env = safety_gymnasium.wrappers.SafetyGymnasium2Gymnasium(env)           # and back to 5-tuples

``make`` takes Safety-Gymnasium's ``id=``, ``max_episode_steps=`` (crax's ``episode_length``),
``autoreset=``, ``render_mode=``, ``camera_name=`` (one of crax's cameras), ``width=``/``height=``
and ``disable_env_checker=`` (no checker is added either way), besides crax's own parameters.
What has no crax counterpart (``camera_id``, ``config``, ``apply_api_compatibility=True``, a
version suffix Safety-Gymnasium does not register) raises a ValueError saying what to use.

Ids: a Safety-Gymnasium id crax serves is Safety-Gymnasium's own task, as Safety-Gymnasium 1.0.0
defines it (``crax.registry().env_ids("safety-gymnasium")``; docs/safety_gymnasium.md); any other
``Safety...`` id is a ValueError listing them. ``paper_variant=True`` maps every ``Safety<Task>-vN``
onto crax's own (the paper's) task of that name instead: ``SafetyPointGoal1-v0`` -> ``PointGoal1``.
"""

from __future__ import annotations

from typing import Any, cast

from crax.gymnasium.safety import vector, wrappers
from crax.gymnasium.safety.ids import SAFETY_VERSIONS, crax_id
from crax.gymnasium.safety.make_args import crax_make_args
from crax.gymnasium.safety.wrappers import SafeAutoResetWrapper, SafetyGymnasiumVectorWrapper, SafetyGymnasiumWrapper

__all__ = [
    "SAFETY_VERSIONS", "SafetyGymnasiumVectorWrapper", "SafetyGymnasiumWrapper", "crax_id", "make", "vector",
    "wrappers",
]


def make(id: str, num_envs: int = 1, render_mode: str | None = None, *, max_episode_steps: int | None = None,  # noqa: A002
         autoreset: bool | None = None, **kwargs: Any):
    """:func:`crax.gymnasium.make` with ``safety_gymnasium=True``, called as ``safety_gymnasium.make``.

    Args:
      id: a Safety-Gymnasium id crax serves (``SafetyPointGoal1-v0``: Safety-Gymnasium's own task)
        or a crax id; with ``paper_variant=True`` any ``Safety<Task>`` id (``-v0``/``-v1`` or no
        suffix), mapped onto crax's own task of that name (``PointGoal1``).
      num_envs: more than 1 gives the vector env (as :func:`vector.make`, but with
        :func:`crax.gymnasium.make`'s default autoreset mode).
      render_mode: None or ``"rgb_array"``.
      max_episode_steps: the time limit, crax's ``episode_length`` parameter (None: the task's).
      autoreset: True wraps the single env in :class:`wrappers.SafeAutoResetWrapper` (same-step
        reset, ``info["final_observation"]``); a vector env always autoresets.
      **kwargs: ``paper_variant``, ``camera_name``, ``width``, ``height``, ``disable_env_checker``,
        ``autoreset_mode`` (vector only) and crax parameters (``crax.parameters(id)``).
    """
    if num_envs > 1 and autoreset is False:
        raise ValueError("autoreset=False: crax's vector env always autoresets (choose when with autoreset_mode=)")
    from crax.gymnasium.factory import make as make_gymnasium

    env_id, options = crax_make_args(id, max_episode_steps, kwargs)
    env = make_gymnasium(env_id, num_envs, render_mode, safety_gymnasium=True, **options)
    if autoreset and num_envs == 1:  # one env: make_gymnasium gave the single env's wrapper
        return SafeAutoResetWrapper(cast(SafetyGymnasiumWrapper, env))
    return env
