"""``safety_gymnasium.vector`` for crax: :func:`make` gives one batched crax env with the 6-tuple step."""

from __future__ import annotations

from typing import Any

from gymnasium.vector import AutoresetMode

import crax
from crax.gymnasium.env import check_render_mode
from crax.gymnasium.safety.make_args import crax_make_args
from crax.gymnasium.safety.wrappers import SafetyGymnasiumVectorWrapper
from crax.gymnasium.vector import CraxVectorEnv

__all__ = ["make"]


def make(env_id: str, num_envs: int = 1, asynchronous: bool = True, wrappers: Any = None,
         disable_env_checker: bool | None = None, *, render_mode: str | None = None,
         max_episode_steps: int | None = None, autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
         **kwargs: Any) -> SafetyGymnasiumVectorWrapper:
    """``num_envs`` copies of a crax env as one :class:`crax.gymnasium.CraxVectorEnv` with
    Safety-Gymnasium's step, ``(obs, rewards, costs, terminations, truncations, infos)``.

    ``asynchronous`` is accepted and has no effect: all envs step as one jitted batch either way.
    The default ``autoreset_mode`` is same-step, as Safety-Gymnasium's vector envs (the finished
    episode's last observation in ``infos["final_observation"]``); ``autoreset_mode="NextStep"``
    gives Gymnasium 1.x's. ``kwargs``: as :func:`crax.gymnasium.safety.make`'s (``camera_name``,
    ``width``, ``height``, crax parameters).

    Raises:
      ValueError: ``wrappers`` (per-env wrappers: crax's envs are one batch; wrap the vector env
        with ``gymnasium.wrappers.vector`` instead), or anything :func:`crax.gymnasium.safety.make`
        refuses.
    """
    if wrappers is not None:
        raise ValueError("wrappers= wraps each sub-env, but crax's vector env steps all envs as one batch: wrap the "
                         "vector env with gymnasium.wrappers.vector.* instead (crax.gymnasium.make(id, num_envs=N) "
                         "gives it with Gymnasium's 5-tuple step)")
    if not isinstance(asynchronous, bool):
        raise ValueError(f"asynchronous must be True or False, got {asynchronous!r}")
    check_render_mode(render_mode)
    crax_id, options = crax_make_args(env_id, max_episode_steps, {**kwargs, "disable_env_checker": disable_env_checker})
    render_kwargs = {k: v for k in ("camera", "width", "height") if (v := options.pop(k, None)) is not None}
    env = crax.make(crax_id, **options)
    return SafetyGymnasiumVectorWrapper(CraxVectorEnv(env, num_envs, render_mode, render_kwargs, autoreset_mode))
