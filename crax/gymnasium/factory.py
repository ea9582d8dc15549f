""":func:`make`: a crax env id as a Gymnasium env or vector env, optionally with the Safety-Gymnasium step."""

from __future__ import annotations

from typing import Any

from gymnasium.vector import AutoresetMode

import crax
from crax.gymnasium.autoreset import AUTORESET_MODES, check_autoreset_mode
from crax.gymnasium.env import CraxEnv, check_render_mode
from crax.gymnasium.safety.wrappers import SafetyGymnasiumVectorWrapper, SafetyGymnasiumWrapper
from crax.gymnasium.vector import CraxVectorEnv


def make(env_id: str, num_envs: int = 1, render_mode: str | None = None, safety_gymnasium: bool = False, *,
         camera: str | None = None, width: int | None = None, height: int | None = None,
         autoreset_mode: AutoresetMode | str | None = None, **params: Any):
    """The crax env ``env_id`` as a Gymnasium env (``num_envs == 1``) or vector env (:func:`make_vector`).

    Args:
      env_id: a crax id (``crax.env_ids()``).
      num_envs: 1 for a :class:`CraxEnv`, more for a :class:`CraxVectorEnv`.
      render_mode: None or ``"rgb_array"``.
      safety_gymnasium: wrap in :class:`SafetyGymnasiumWrapper` (or the vector one): ``step``
        returns ``(obs, reward, cost, terminated, truncated, info)``.
      camera, width, height: for ``render()`` (:func:`crax.render.render`); None: its defaults.
      autoreset_mode: the vector env's, ``AutoresetMode.NEXT_STEP`` (None: the default) or
        ``AutoresetMode.SAME_STEP``; a single env takes none.
      **params: passed to :func:`crax.make` (``crax.parameters(env_id)`` lists them), e.g.
        ``episode_length=500``.

    Raises:
      ValueError: ``num_envs`` below 1, an unknown ``render_mode`` or ``autoreset_mode``, an
        ``autoreset_mode`` for a single env (all before the env is built), or
        whatever :func:`crax.make` rejects (unknown id or parameter), unchanged. Nothing is
        compiled before the first ``reset``.
    """
    _check_num_envs(num_envs)
    if num_envs > 1:
        return make_vector(env_id, num_envs, render_mode, safety_gymnasium, camera=camera, width=width,
                           height=height, autoreset_mode=autoreset_mode, **params)
    check_render_mode(render_mode)
    if autoreset_mode is not None:
        raise ValueError("autoreset_mode is for vector envs (num_envs > 1); a single env does not autoreset")
    single = CraxEnv(crax.make(env_id, **params), render_mode, _render_kwargs(camera, width, height))
    return SafetyGymnasiumWrapper(single) if safety_gymnasium else single


def make_vector(env_id: str, num_envs: int = 1, render_mode: str | None = None, safety_gymnasium: bool = False, *,
                camera: str | None = None, width: int | None = None, height: int | None = None,
                autoreset_mode: AutoresetMode | str | None = None, **params: Any):
    """The crax env ``env_id`` as a Gymnasium vector env of ``num_envs`` envs, one included (what
    ``gymnasium.make_vec`` builds for a ``crax/`` id). Arguments and errors as :func:`make`'s."""
    _check_num_envs(num_envs)
    check_render_mode(render_mode)
    mode = AUTORESET_MODES[0] if autoreset_mode is None else check_autoreset_mode(autoreset_mode)
    vector = CraxVectorEnv(crax.make(env_id, **params), num_envs, render_mode, _render_kwargs(camera, width, height),
                           mode)
    return SafetyGymnasiumVectorWrapper(vector) if safety_gymnasium else vector


def _check_num_envs(num_envs: Any) -> None:
    if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")


def _render_kwargs(camera: str | None, width: int | None, height: int | None) -> dict[str, Any]:
    return {k: v for k, v in (("camera", camera), ("width", width), ("height", height)) if v is not None}
