"""Which MJX implementation steps an env's physics: ``physics="jax"`` (the default) or ``"warp"``.

``"jax"`` is MJX's JAX implementation (``mjx.put_model(m, impl="jax")``), on every device jax runs
on. ``"warp"`` is MJX's Warp implementation (``impl="warp"``): NVIDIA Warp kernels that jax calls
through its FFI, on a CUDA GPU or on the CPU (Warp's CPU device). mujoco-mjx carries its own copy of
MuJoCo Warp (``mujoco.mjx.third_party.mujoco_warp``), so the only extra package is ``warp-lang``
(``pip install 'crax[warp]'``).

Warp's ``Data`` holds the fields of one env as the JAX one does, except for a contact buffer and a
few counters that every env of a batch shares (``SHARED_FIELDS``): ``jax.vmap`` leaves them unbatched
and Warp's kernels fill them for all envs at once. So

* the buffer must hold the contacts of the whole batch. :func:`batch` says how many envs (worlds)
  a reset traced inside it serves, and :func:`make_data` sizes the buffer for that many: MuJoCo
  Warp's own per-world estimate (``nconmax``, at least 48 contacts per env) times the worlds.
  :class:`crax.core.env.Vmap` opens it around its reset; a caller that vmaps a Vmap once more (the
  learners' seeds) passes the product as ``Vmap(..., worlds=)``. A batch that still collides more
  than that prints MuJoCo Warp's "narrowphase overflow - please increase ... naconmax" and drops
  the extra contacts;
* code that maps a function over every leaf of a batched state (a reshape, a select) must leave
  these fields alone: :func:`map_per_env` and :func:`select` do.

A model feature Warp does not implement is a ValueError from :func:`put_model` naming the env and
the feature; so is a crax component that reads the JAX implementation's own fields (the contact
list, ``rne_postconstraint``'s accelerations), which the env finds when it traces a reset and a step.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import mujoco

from crax.core.mjx import WARP_SHARED_FIELDS, mjx, mjx_forward, mjx_scan
from crax.devices import startup

PHYSICS = ("jax", "warp")
"""Valid values of ``physics``: MJX's JAX implementation and its Warp implementation."""

WARP_INSTALL = "pip install 'crax[warp]' (the warp-lang package, NVIDIA Warp)"

SHARED_FIELDS = WARP_SHARED_FIELDS
"""Fields of Warp's ``Data._impl`` that all envs of a batch share (contacts, their counters, sizes)."""


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


def put_model(mj_model: mujoco.MjModel, physics: str, env_id: str) -> mjx.Model:
    """``mjx.put_model`` with the implementation ``physics`` names. For ``"warp"``, a model feature
    MuJoCo Warp does not implement is a ValueError naming ``env_id`` and the feature (MuJoCo Warp's
    own words, e.g. ``mjSOL_PGS is unsupported.``) and the fix. The JAX implementation's own
    refusals (NotImplementedError) pass through for the caller to explain."""
    if check(physics) == "jax":
        return mjx.put_model(mj_model, impl="jax")
    require_warp()
    try:
        model = mjx.put_model(mj_model, impl="warp")
    except (NotImplementedError, ValueError) as e:
        raise ValueError(f"{env_id} cannot run on physics='warp': MuJoCo Warp does not support a feature of its "
                         f"model: {e} Use physics='jax' for this env.") from None
    return _without_solver_limit_warnings(model)


def _without_solver_limit_warnings(model: mjx.Model) -> mjx.Model:
    """``model`` without MuJoCo Warp's "solver iterations limit reached" and "linesearch iterations"
    lines, which it prints from its kernels whenever a solve ends at its iteration budget: crax's
    bodies set small budgets on purpose (decision 3), so an AntVelocity1 batch printed one on most
    steps. Its warnings of a full buffer (contacts, constraint rows), which mean dropped contacts,
    stay on."""
    from mujoco.mjx.third_party.mujoco_warp import OverflowType

    opt = model.opt._impl
    kept = int(opt.warn_overflow) & ~int(OverflowType.ITERATIONS | OverflowType.LS_ITERATIONS)  # pyright: ignore[reportAttributeAccessIssue]
    return model.replace(opt=model.opt.replace(_impl=opt.replace(warn_overflow=kept)))  # pyright: ignore[reportAttributeAccessIssue]


RK4_STAGES_ENV = "CRAX_RK4_STAGES"
"""Environment variable: how an RK4 model's three intermediate stages are compiled, ``unrolled``
(the default: MJX's own ``rungekutta4``) or ``rolled`` (:func:`_rk4`; decision 63). Read when a step
is traced."""

RK4_STAGES = ("unrolled", "rolled")


def rk4_stages() -> str:
    """``$CRAX_RK4_STAGES`` (default ``unrolled``); ValueError naming the valid values otherwise."""
    value = os.environ.get(RK4_STAGES_ENV, "unrolled").strip().lower()
    if value not in RK4_STAGES:
        raise ValueError(f"environment variable {RK4_STAGES_ENV}={os.environ[RK4_STAGES_ENV]!r} must be one of "
                         f"{', '.join(RK4_STAGES)}: unrolled is MJX's own RK4 step, rolled runs its three "
                         f"stages in a loop (the same arithmetic, faster to compile)")
    return value


def step(model: mjx.Model, data: mjx.Data) -> mjx.Data:
    """One physics step of ``model``: ``mjx.step``; with ``CRAX_RK4_STAGES=rolled``, a JAX-implementation
    model with MuJoCo's RK4 integrator runs its three intermediate stages in a rolled loop (:func:`_rk4`)."""
    rk4 = isinstance(model._impl, mjx.ModelJAX) and model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    if rk4 and rk4_stages() == "rolled":
        return _rk4(model, mjx.forward(model, data))
    return mjx.step(model, data)


def _rk4(m: mjx.Model, d: mjx.Data) -> mjx.Data:
    """MJX's ``rungekutta4`` on a forwarded ``d``, the same operations in the same order, with its
    stage loop rolled. MJX unrolls the three stages (``lax.scan(unroll=3)``), and XLA compiles a copy
    of the forward pass for each: rolled, the forward pass is compiled once for all three
    (decision 63 has the compile times and the steps/s measured both ways)."""
    a_table, b_table, dt = mjx_forward._RK4_A, mjx_forward._RK4_B, m.opt.timestep
    stage_times = d.time + jnp.tril(a_table).sum(axis=0) * dt
    d0 = d
    sums = jax.tree.map(lambda k: b_table[0] * k, (d.qvel, d.qacc, d.act_dot))

    def integrate(*args):
        return mjx_forward._integrate_pos(*args, dt=dt)

    def stage(carry, x):
        (qvel, qacc, act_dot), kqvel, d = carry
        a, b, t = x
        dqvel, dqacc, dact_dot = jax.tree.map(lambda k: a * k, (kqvel, d.qacc, d.act_dot))
        kqpos = mjx_scan.flat(m, integrate, "jqv", "q", m.jnt_type, d0.qpos, dqvel)
        kact = d0.act + dact_dot * dt
        kqvel = d0.qvel + dqacc * dt
        d = mjx.forward(m, d.replace(qpos=kqpos, qvel=kqvel, act=kact, time=t))
        sums = (qvel + b * kqvel, qacc + b * d.qacc, act_dot + b * d.act_dot)
        return (sums, kqvel, d), None

    table = jnp.vstack([jnp.diag(a_table), b_table[1:4], stage_times]).T
    ((qvel, qacc, act_dot), _, d1), _ = jax.lax.scan(stage, (sums, d.qvel, d), table)
    d = d1.replace(qpos=d0.qpos, qvel=d0.qvel, act=d0.act, time=d0.time)
    return mjx_forward._advance(m, d, act_dot, qacc, qvel)


def worlds_per_batch() -> int:
    """The number of envs a reset traced now serves (:func:`batch`); 1 outside any."""
    return getattr(_batch, "worlds", 1)


_batch = threading.local()


@contextlib.contextmanager
def batch(worlds: int) -> Iterator[None]:
    """Traces inside it build Warp data for ``worlds`` envs stepped together (a contact buffer that
    holds theirs: :func:`make_data`). Nested, the counts multiply. No effect on ``physics="jax"``."""
    outer = worlds_per_batch()
    _batch.worlds = outer * int(worlds)
    try:
        yield
    finally:
        _batch.worlds = outer


def make_data(mj_model: mujoco.MjModel, model: mjx.Model, physics: str, worlds: int = 1) -> mjx.Data:
    """The initial ``mjx.Data`` of one env; for ``"warp"``, with a contact buffer for ``worlds`` envs
    (MuJoCo Warp's per-world estimate for the model times ``worlds``), built as concrete arrays even
    when called while a reset is being traced."""
    if check(physics) == "jax":
        return mjx.make_data(model)
    with jax.ensure_compile_time_eval():  # concrete arrays, also when a reset being traced asks for them
        per_world = mjx.make_data(mj_model, impl="warp")._impl.naconmax  # pyright: ignore[reportAttributeAccessIssue]
        return mjx.make_data(mj_model, impl="warp", naconmax=int(per_world) * int(worlds))


def is_shared(path: tuple) -> bool:
    """Whether a pytree path ends in a field Warp's data shares across a batch (``._impl.contact__pos``)."""
    names = [getattr(k, "name", None) for k in path]
    return len(names) >= 2 and names[-2] == "_impl" and names[-1] in SHARED_FIELDS


def map_per_env(fn: Callable, tree: Any, *rest: Any) -> Any:
    """``jax.tree.map(fn, tree, *rest)`` over the per-env leaves; a field Warp's data shares across the
    batch (:data:`SHARED_FIELDS`) is taken from the last tree unchanged. With JAX physics (no shared
    fields) it is ``jax.tree.map``."""
    def leaf(path, x, *xs):
        return (xs[-1] if xs else x) if is_shared(path) else fn(x, *xs)

    return jax.tree_util.tree_map_with_path(leaf, tree, *rest)


def select(done: jax.Array, new: Any, old: Any) -> Any:
    """Per env, ``new`` where ``done`` else ``old`` (``done`` shape ``(N,)``, leaves ``(N, ...)``),
    keeping ``old``'s shared Warp buffers (mjx's own ``Data.where`` does the same)."""
    def pick(a, b):
        return jnp.where(done.reshape(done.shape + (1,) * (a.ndim - done.ndim)), a, b)

    return map_per_env(pick, new, old)


__all__ = ["PHYSICS", "SHARED_FIELDS", "WarpUnavailable", "batch", "check", "is_shared", "make_data", "map_per_env", "put_model",
           "RK4_STAGES", "RK4_STAGES_ENV", "require_warp", "rk4_stages", "select", "step", "worlds_per_batch"]
