"""Safety-Gymnasium's ``make`` keywords turned into :func:`crax.gymnasium.make`'s, or refused."""

from __future__ import annotations

from typing import Any

from crax.gymnasium.safety.ids import crax_id
from crax.render import CAMERAS

_REFUSED = {
    "camera_id": "crax renders from named cameras: pass camera_name='track' or 'top'",
    "config": "Safety-Gymnasium's config dict has no crax counterpart: pass crax parameters as keywords "
              "(crax.parameters(id) lists them)",
    "apply_api_compatibility": "crax envs use Gymnasium's step API; only apply_api_compatibility=None or False",
}


def crax_make_args(env_id: str, max_episode_steps: int | None, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The crax id and :func:`crax.gymnasium.make` keywords for ``safety_gymnasium.make(env_id,
    max_episode_steps=..., **kwargs)``; ValueError for a keyword crax cannot honour."""
    kwargs = dict(kwargs)
    kwargs.pop("disable_env_checker", None)  # crax adds no env checker: either value is honoured
    if not kwargs.get("apply_api_compatibility"):
        kwargs.pop("apply_api_compatibility", None)
    for name, hint in _REFUSED.items():
        if name in kwargs:
            raise ValueError(f"safety_gymnasium.make({name}=...) is not supported by crax: {hint}")
    if max_episode_steps is not None:
        if kwargs.get("episode_length", max_episode_steps) != max_episode_steps:
            raise ValueError(f"max_episode_steps={max_episode_steps} and episode_length={kwargs['episode_length']} "
                             "disagree: they are the same time limit, give one")
        kwargs["episode_length"] = max_episode_steps
    camera = kwargs.pop("camera_name", None)
    if camera is not None:
        if camera not in CAMERAS:
            raise ValueError(f"camera_name={camera!r} is not a crax camera; valid choices: {', '.join(CAMERAS)}")
        kwargs["camera"] = camera
    return crax_id(env_id), kwargs
