"""Which MJX implementation steps an env's physics: ``physics="jax"`` (the default) or ``"warp"``.

``"jax"`` is MJX's JAX implementation (``mjx.put_model(m, impl="jax")``), on every device jax runs
on. ``"warp"`` is MJX's Warp implementation (``impl="warp"``): NVIDIA Warp kernels that jax calls
through its FFI, on a CUDA GPU or on the CPU (Warp's CPU device). mujoco-mjx carries its own copy of
MuJoCo Warp (``mujoco.mjx.third_party.mujoco_warp``), so the only extra package is ``warp-lang``
(``pip install 'crax[warp]'``).

Warp's ``Data`` holds the fields of one env as the JAX one does, except for a contact buffer and a
few counters that every env of a batch shares: :func:`make_data` sizes them for the envs of crax's
named vmaps around the reset being traced (:func:`worlds`; :mod:`crax.core.batch` says how a batch
lies in a program). Such a batch runs on one device (:func:`single_device`).

A model feature Warp does not implement is a ValueError from :func:`put_model` naming the env and
the feature; so is a crax component that reads the JAX implementation's own fields (the touch
sensors' contact forces), which the env finds when it traces a reset and a step (:func:`check_env`).
A component that reads ``mj_rnePostConstraint``'s accelerations and forces declares it
(``reads_post_constraint``): a Warp model then computes them in its step (:func:`post_constraint`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import mujoco

from crax.core.batch import world_index
from crax.core.mjx import mjx
from crax.devices import startup
from crax.devices.settings import PHYSICS, Physics

# PHYSICS (the valid values of ``physics``) and the Physics literal are declared in crax.devices.settings

WARP_INSTALL = "pip install 'crax[warp]' (the warp-lang package, NVIDIA Warp)"

class WarpUnavailable(ImportError, ValueError):
    """NVIDIA Warp (``warp-lang``) is not installed, or mjx cannot import its copy of MuJoCo Warp.

    An ImportError, and a ValueError as well, so that every crax command reports it as bad input
    (the message names the extra to install) rather than with a traceback."""


def check(physics: Any, where: str = "physics") -> str:
    """``physics`` if it is one of :data:`PHYSICS`; ValueError naming the valid values otherwise."""
    if not (isinstance(physics, str) and physics in PHYSICS):
        raise ValueError(f"{where} must be one of {', '.join(PHYSICS)}, got {physics!r}: 'jax' runs MJX's JAX "
                         f"implementation (any device), 'warp' its Warp implementation (CUDA GPU or CPU; "
                         f"{WARP_INSTALL})")
    return physics


def require_warp() -> None:
    """Raises :class:`WarpUnavailable` naming the extra to install when NVIDIA Warp (``warp-lang``) or
    mjx's copy of MuJoCo Warp cannot be imported, and ValueError when jax's default device is one Warp
    cannot run on (it runs on a CUDA GPU or on the CPU, not on a TPU or a ROCm GPU). Under a ``crax``
    command it turns Warp's info log off (its greeting and a line per kernel module it loads)."""
    try:
        import warp  # pyright: ignore[reportMissingImports]  (the optional extra)
        from mujoco.mjx.third_party import mujoco_warp  # noqa: F401
    except (ImportError, RuntimeError) as e:
        raise WarpUnavailable(f"physics='warp' needs NVIDIA Warp: {WARP_INSTALL}; or use physics='jax' "
                              f"({type(e).__name__}: {e})") from None
    if startup.under_command_line():  # Warp's greeting and its line per kernel module loaded (30+ per run)
        warp.config.log_level = warp.LOG_WARNING
    device = jax.devices()[0]
    if device.platform == "cpu":
        return
    try:
        cuda = device in jax.devices("cuda")
    except RuntimeError:  # no CUDA backend
        cuda = False
    if not cuda:
        raise ValueError(f"physics='warp' runs on a CUDA GPU or on the CPU; jax's default device is {device} "
                         f"({device.platform}): use physics='jax', or run jax on the CPU (JAX_PLATFORMS=cpu)")


def require(physics: str) -> None:
    """ValueError naming the valid values unless ``physics`` is one of them; for ``"warp"``, also
    :func:`require_warp` (a missing package or an unsupported device is found before a model is built)."""
    if check(physics) == "warp":
        require_warp()


def check_env(physics: str, env_id: str, trace: Callable[[], Any]) -> None:
    """On ``"warp"``, runs ``trace`` (an env's reset and step under ``jax.eval_shape``) and turns a part of
    the task that reads the JAX implementation's own per-env fields (the touch sensors' contact forces)
    into a ValueError naming ``env_id``. Nothing on ``"jax"``."""
    if check(physics) != "warp":
        return
    try:
        trace()
    except ValueError as e:
        raise ValueError(f"{env_id} cannot run on physics='warp': {e}") from None


def put_model(mj_model: mujoco.MjModel, physics: str, env_id: str, *, post_constraint: bool = False) -> mjx.Model:
    """``mjx.put_model`` with the implementation ``physics`` names. For ``"warp"``, a model feature
    MuJoCo Warp does not implement is a ValueError naming ``env_id`` and the feature (MuJoCo Warp's
    own words, e.g. ``mjSOL_PGS is unsupported.``) and the fix. The JAX implementation's own
    refusals (NotImplementedError) pass through for the caller to explain. ``post_constraint``: a
    Warp model runs ``mj_rnePostConstraint`` after every solve, for :func:`post_constraint` to read
    (the JAX implementation computes it when read)."""
    if check(physics) == "jax":
        return mjx.put_model(mj_model, impl="jax")
    require_warp()
    try:
        model = mjx.put_model(mj_model, impl="warp")
    except (NotImplementedError, ValueError) as e:
        raise ValueError(f"{env_id} cannot run on physics='warp': MuJoCo Warp does not support a feature of its "
                         f"model: {e} Use physics='jax' for this env.") from None
    model = _without_solver_limit_warnings(model)
    if post_constraint:
        opt = model.opt._impl
        model = model.replace(opt=model.opt.replace(_impl=opt.replace(run_rne_postconstraint=True)))  # pyright: ignore[reportAttributeAccessIssue]
    return model


def post_constraint(model: mjx.Model, data: mjx.Data) -> Any:
    """``data``'s implementation fields with the body accelerations and forces of MuJoCo's
    ``mj_rnePostConstraint`` (``cacc``, ``cfrc_ext``, ``cfrc_int``; besides ``cinert`` and the rest): on
    the JAX implementation computed now (``mjx.rne_postconstraint`` of ``model``, a JAX model of the
    same structure), on Warp the step's own, which a model put with ``post_constraint=True``
    computes (:func:`put_model`; a component declares ``reads_post_constraint``). Warp's fields are
    those of the step's own forward pass, before it integrates; the JAX implementation's are computed
    from the stepped data, whose ``qvel`` is already integrated: ``cfrc_ext`` (positions and forces)
    agrees between them, ``cacc`` (which reads ``qvel``) does not."""
    if isinstance(data._impl, mjx.DataJAX):
        return mjx.rne_postconstraint(model, data)._impl
    if not isinstance(model._impl, mjx.ModelJAX) and not model.opt._impl.run_rne_postconstraint:  # pyright: ignore[reportAttributeAccessIssue]
        raise ValueError("this reads mj_rnePostConstraint's fields (cacc, cfrc_ext), which a physics='warp' model "
                         "computes only when the body or component that reads them sets reads_post_constraint = True")
    return data._impl


def _without_solver_limit_warnings(model: mjx.Model) -> mjx.Model:
    """``model`` without MuJoCo Warp's "solver iterations limit reached" and "linesearch iterations"
    lines, which it prints from its kernels whenever a solve ends at its iteration budget: crax's
    bodies set small budgets on purpose, each the smallest that matches a converged solve
    (docs/DECISIONS.md, decision 3), so an AntVelocity1 batch printed one on most steps. Its warnings
    of a full buffer (contacts, constraint rows), which mean dropped contacts, stay on."""
    from mujoco.mjx.third_party.mujoco_warp import OverflowType

    opt = model.opt._impl
    kept = int(opt.warn_overflow) & ~int(OverflowType.ITERATIONS | OverflowType.LS_ITERATIONS)  # pyright: ignore[reportAttributeAccessIssue]
    return model.replace(opt=model.opt.replace(_impl=opt.replace(warn_overflow=kept)))  # pyright: ignore[reportAttributeAccessIssue]


def shares_buffers(physics: str) -> bool:
    """Whether a batch of envs on ``physics`` shares buffers sized for, and read through, crax's named vmaps
    (MJX's Warp implementation: the contact buffer): such a batch steps on one device, under no vmap
    but crax's."""
    return check(physics) == "warp"


def worlds(physics: str) -> int:
    """How many envs the data of a reset traced now serves: 1 where each env owns its data; where a batch
    shares buffers (:func:`shares_buffers`), the envs of crax's named vmaps around the trace (:func:`world_index`)."""
    return world_index()[1] if shares_buffers(physics) else 1


def single_device(physics: str) -> bool:
    """Whether a batch of envs on ``physics`` must step on one device: its shared buffers
    (:func:`shares_buffers`) are not split over devices."""
    return shares_buffers(physics)


def make_data(mj_model: mujoco.MjModel, model: mjx.Model, physics: str, worlds: int = 1) -> mjx.Data:
    """The initial ``mjx.Data`` of one env; for ``"warp"``, with a contact buffer for ``worlds`` envs
    (MuJoCo Warp's per-world estimate for the model times ``worlds``; :func:`worlds` inside a reset's
    trace), built as concrete arrays even when called while a reset is being traced."""
    if check(physics) == "jax":
        return mjx.make_data(model)
    with jax.ensure_compile_time_eval():  # concrete arrays, also when a reset being traced asks for them
        per_world = mjx.make_data(mj_model, impl="warp")._impl.naconmax  # pyright: ignore[reportAttributeAccessIssue]
        return mjx.make_data(mj_model, impl="warp", naconmax=int(per_world) * int(worlds))


__all__ = ["PHYSICS", "Physics", "WarpUnavailable", "check", "check_env", "make_data", "post_constraint", "put_model",
           "require", "require_warp", "shares_buffers", "single_device", "worlds"]
