"""Safety-Gymnasium's ``make`` keywords turned into :func:`crax.gymnasium.make`'s, or refused."""

from __future__ import annotations

from typing import Any

from crax.gymnasium.safety.ids import crax_id
from crax.plugins.manager import registry
from crax.render import CAMERAS

SAFETY_GYMNASIUM = "safety-gymnasium"
"""The registry name of Safety-Gymnasium's catalogue (:mod:`crax.suites.safety_gym.catalogue`)."""

_REFUSED = {
    "camera_id": "crax renders from named cameras: pass camera_name='track' or 'top'",
    "config": "Safety-Gymnasium's config dict has no crax counterpart: pass crax parameters as keywords "
              "(crax.parameters(id) lists them)",
    "apply_api_compatibility": "crax envs use Gymnasium's step API; only apply_api_compatibility=None or False",
}


def resolve_id(env_id: str, paper_variant: bool = False) -> str:
    """The crax id ``safety_gymnasium.make(env_id)`` builds.

    A Safety-Gymnasium id crax serves (``SafetyPointGoal1-v0``) is Safety-Gymnasium's own task
    (its catalogue in the registry, :mod:`crax.suites.safety_gym.catalogue`); with
    ``paper_variant=True`` it is the paper's task of the same name instead (``PointGoal1``:
    :func:`crax_id`, any ``Safety...`` id). A crax id (any id the registry lists) is itself.

    Raises:
      ValueError: another ``Safety...`` id without ``paper_variant``: the message lists the
        Safety-Gymnasium ids crax serves.
    """
    if paper_variant:
        return crax_id(env_id)
    reg = registry()
    if isinstance(env_id, str) and env_id.startswith("Safety") and env_id not in reg.env_ids():
        try:  # an id no catalogue lists: Safety-Gymnasium's catalogue names the ids served
            reg.catalogues[SAFETY_GYMNASIUM].lookup(env_id, reg)
        except ValueError as e:
            raise ValueError(f"{e}; paper_variant=True gives crax's own (paper) task of that name instead") from None
    return env_id


def crax_make_args(env_id: str, max_episode_steps: int | None, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The crax id (:func:`resolve_id`, with ``kwargs["paper_variant"]``) and :func:`crax.gymnasium.make`
    keywords for ``safety_gymnasium.make(env_id, max_episode_steps=..., **kwargs)``; ValueError for a
    keyword crax cannot honour."""
    kwargs = dict(kwargs)
    paper_variant = bool(kwargs.pop("paper_variant", False))
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
    return resolve_id(env_id, paper_variant), kwargs
