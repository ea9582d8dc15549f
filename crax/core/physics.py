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

* the buffer's contacts name their env by its index in the batch (``contact__worldid``): the envs
  of all vmaps around the Warp call, flattened outer-major. crax's vmaps over envs are named
  (:data:`ENV_AXIS` in :class:`crax.core.env.Vmap`, :data:`BATCH_AXIS` where the learners vmap a
  Vmap once more), so :func:`world_index` can tell each env which contacts are its own
  (:mod:`crax.core.contacts`).

A model feature Warp does not implement is a ValueError from :func:`put_model` naming the env and
the feature; so is a crax component that reads the JAX implementation's own fields (the touch
sensors' contact forces), which the env finds when it traces a reset and a step. A component that
reads ``mj_rnePostConstraint``'s accelerations and forces declares it (``reads_post_constraint``):
a Warp model then computes them in its step (:func:`post_constraint`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import mujoco

from crax.core.mjx import WARP_SHARED_FIELDS, mjx, mjx_forward, mjx_scan
from crax.devices import settings, startup
from crax.devices.settings import PHYSICS, Physics

# PHYSICS (the valid values of ``physics``) and the Physics literal are declared in crax.devices.settings

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


RK4_STAGES_ENV = settings.RK4_STAGES.name
"""Environment variable: how an RK4 model's steps are compiled, ``unrolled`` (the default: MJX's own
``rungekutta4``, its three stages unrolled) or ``rolled`` (:func:`_rk4_substeps`: the step's forward pass
and its stages' as iterations of one loop, which compiles one copy of the forward pass instead of four;
docs/DECISIONS.md, decisions 63 and 64). Read when a step is traced; declared in :mod:`crax.devices.settings`."""

RK4_STAGES: tuple[str, ...] = settings.RK4_STAGES.valid or ()


def rk4_stages() -> str:
    """``$CRAX_RK4_STAGES`` (default ``unrolled``); ValueError naming the valid values otherwise."""
    return settings.read(settings.RK4_STAGES)


def step(model: mjx.Model, data: mjx.Data) -> mjx.Data:
    """One physics step of ``model``: ``mjx.step``; with ``CRAX_RK4_STAGES=rolled``, a JAX-implementation
    model with MuJoCo's RK4 integrator runs its forward passes (the step's and its three stages') as
    one loop (:func:`substeps`)."""
    if _rolled_rk4(model):
        return _rk4_substeps(model, data, 1, None, False)
    return mjx.step(model, data)


def substeps(model: mjx.Model, data: mjx.Data, n: int, before: Callable[[mjx.Data], mjx.Data] | None = None,
             forward_after: bool = False) -> mjx.Data:
    """``n`` physics steps of ``model`` (:func:`step`) in a ``lax.scan``, each after ``before(data)``;
    with ``forward_after``, then one ``mjx.forward`` (MuJoCo's ``mj_step`` n times, then
    ``mj_forward``: the positions, contacts and sensors of the final state).

    The same operations in the same order, arranged so that the program holds one copy of the forward
    pass, to compile it once (docs/DECISIONS.md, decision 64): on the JAX implementation the forward
    pass after the steps is the loop's last iteration, which skips ``before`` and the integrator, and
    with ``CRAX_RK4_STAGES=rolled`` an RK4 model's step and stage forward passes are iterations of that
    one loop too (:func:`_rk4_substeps`)."""
    if _rolled_rk4(model):
        return _rk4_substeps(model, data, n, before, forward_after)
    if not forward_after or not isinstance(model._impl, mjx.ModelJAX):
        def one(d, _):
            return step(model, before(d) if before is not None else d), None

        data = jax.lax.scan(one, data, None, length=n)[0]
        return mjx.forward(model, data) if forward_after else data

    def iteration(d, last):
        d = mjx.forward(model, _select(last, d, before(d) if before is not None else d))  # no ``before`` at the end
        return jax.lax.cond(last, lambda d: d, lambda d: _integrate(model, d), d), None

    return jax.lax.scan(iteration, data, jnp.arange(n + 1) == n)[0]


def _rolled_rk4(model: mjx.Model) -> bool:
    return (isinstance(model._impl, mjx.ModelJAX) and model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
            and rk4_stages() == "rolled")


def _integrate(m: mjx.Model, d: mjx.Data) -> mjx.Data:
    """What ``mjx.step`` does to a forwarded ``d`` after its forward pass: the integrator (JAX implementation)."""
    integrator = m.opt.integrator
    if integrator == mujoco.mjtIntegrator.mjINT_EULER:
        return mjx_forward.euler(m, d)
    if integrator == mujoco.mjtIntegrator.mjINT_RK4:
        return mjx_forward.rungekutta4(m, d)
    if integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST:
        return mjx_forward.implicit(m, d)
    raise NotImplementedError(f"MJX implements no integrator {integrator!r}")


def _select(pred: jax.Array, on_true: Any, on_false: Any) -> Any:
    """``jnp.where(pred, ...)`` leaf by leaf over two pytrees of one structure; a leaf that is the same
    array in both is kept as it is (no select in the program)."""
    return jax.tree.map(lambda t, f: t if t is f else jnp.where(pred, t, f), on_true, on_false)


def _rk4_substeps(m: mjx.Model, d: mjx.Data, n: int, before: Callable[[mjx.Data], mjx.Data] | None,
                  forward_after: bool) -> mjx.Data:
    """``n`` RK4 steps (then the forward pass after them, with ``forward_after``) as one loop of forward
    passes. MJX's ``rungekutta4`` follows the step's forward pass with three stages, each a forward
    pass, in ``lax.scan(unroll=3)``: a loop of its steps compiles four copies of the forward pass.
    Here iteration ``4k`` starts step ``k`` (``before``, the forward pass, the first row of the
    tableau), iterations ``4k + 1`` to ``4k + 3`` are MJX's three stages, the same operations in the
    same order, and ``4k + 3`` ends with MJX's ``_advance``: one copy (docs/DECISIONS.md, decisions 63 and 64)."""
    a_diag, b_row = jnp.diag(mjx_forward._RK4_A), jnp.asarray(mjx_forward._RK4_B)
    c_row, dt = jnp.tril(mjx_forward._RK4_A).sum(axis=0), m.opt.timestep

    def integrate(*args):
        return mjx_forward._integrate_pos(*args, dt=dt)

    def iteration(carry, x):
        d, d0, (qvel, qacc, act_dot), kqvel = carry  # d0: qpos, qvel, act, time where the step began
        s, last = x
        first = s == 0
        i = jnp.maximum(s - 1, 0)  # the stage's row of the tableau (unused when a step begins)
        a, t = a_diag[i], d0[3] + c_row[i] * dt
        dqvel, dqacc, dact_dot = jax.tree.map(lambda k: a * k, (kqvel, d.qacc, d.act_dot))
        staged_qvel = d0[1] + dqacc * dt
        staged = d.replace(qpos=mjx_scan.flat(m, integrate, "jqv", "q", m.jnt_type, d0[0], dqvel),
                           qvel=staged_qvel, act=d0[2] + dact_dot * dt, time=t)
        start = _select(last, d, before(d) if before is not None else d)
        f = mjx.forward(m, _select(first, start, staged))
        b = b_row[s]
        sums = _select(first, jax.tree.map(lambda k: b_row[0] * k, (f.qvel, f.qacc, f.act_dot)),
                       (qvel + b * staged_qvel, qacc + b * f.qacc, act_dot + b * f.act_dot))
        kqvel = jnp.where(first, f.qvel, staged_qvel)
        d0 = _select(first, (f.qpos, f.qvel, f.act, f.time), d0)

        def advance(f):
            f = f.replace(qpos=d0[0], qvel=d0[1], act=d0[2], time=d0[3])
            return mjx_forward._advance(m, f, sums[2], sums[1], sums[0])

        return (jax.lax.cond(s == 3, advance, lambda f: f, f), d0, sums, kqvel), None

    carry = (d, (d.qpos, d.qvel, d.act, d.time), (d.qvel, d.qacc, d.act_dot), d.qvel)
    iterations = jnp.arange(4 * n + int(forward_after))
    return jax.lax.scan(iteration, carry, (iterations % 4, iterations == 4 * n))[0][0]


ENV_AXIS = "crax_envs"
"""``jax.vmap``'s axis name for the envs of a batch (:class:`crax.core.env.Vmap`)."""

BATCH_AXIS = "crax_batches"
"""``jax.vmap``'s axis name where a batch of envs is vmapped once more (the learners' seeds)."""


def world_index() -> tuple[jax.Array | int, int]:
    """This env's index among the envs stepped together, as Warp numbers them (``contact__worldid``),
    and their number: from the named vmaps around the trace (:data:`BATCH_AXIS` outside
    :data:`ENV_AXIS`; Warp flattens nested batches outer-major); ``(0, 1)`` outside any."""
    index: jax.Array | int = 0
    count = 1
    for name in (BATCH_AXIS, ENV_AXIS):
        try:
            i = jax.lax.axis_index(name)
        except NameError:  # not inside a vmap of that name
            continue
        size = int(jax.lax.axis_size(name))
        index, count = index * size + i, count * size
    return index, count


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


__all__ = ["BATCH_AXIS", "ENV_AXIS", "PHYSICS", "Physics", "SHARED_FIELDS", "WarpUnavailable", "batch", "check", "is_shared", "make_data", "map_per_env", "post_constraint", "put_model",
           "RK4_STAGES", "RK4_STAGES_ENV", "require_warp", "rk4_stages", "select", "step", "world_index", "worlds_per_batch"]
