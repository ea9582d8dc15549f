"""Physics steps: :func:`step` and :func:`substeps` (an env step's ``frame_skip`` physics steps), on
either MJX implementation, arranged so that the program holds one copy of the forward pass (decisions
63 and 64 in docs/DECISIONS.md: it compiles once), and an RK4 model's stages rolled into that loop
when ``CRAX_RK4_STAGES=rolled``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import mujoco

from crax.core.mjx import mjx, mjx_forward, mjx_scan
from crax.devices import settings

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


__all__ = ["RK4_STAGES", "RK4_STAGES_ENV", "rk4_stages", "step", "substeps"]
