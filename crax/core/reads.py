"""Which inputs of a function its outputs depend on, read off its jaxpr (traced, nothing computed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax.extend import core as jex

# primitives whose body is one jaxpr taking the equation's inputs in order (a nested jit)
_CALLS = ("pjit", "jit", "closed_call", "core_call")


def read_leaves(fn: Callable[..., Any], *args: Any) -> list[bool]:
    """For each leaf of ``args`` (flattened in order; arrays or ``jax.ShapeDtypeStruct``), whether the
    outputs of ``fn(*args)`` depend on it.

    The walk goes back from the outputs through the equations of ``fn``'s jaxpr, into nested jits; a
    loop, a conditional or a custom derivative counts as reading all of its inputs when any of its
    outputs is used, so a False is certain and a True may be conservative.
    """
    closed = jax.make_jaxpr(fn)(*args)
    return _used_inputs(closed.jaxpr, [True] * len(closed.jaxpr.outvars))


def _used_inputs(jaxpr: jex.Jaxpr, used_outputs: Sequence[bool]) -> list[bool]:
    used = {v for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u and isinstance(v, jex.Var)}
    for eqn in reversed(jaxpr.eqns):
        wanted = [v in used for v in eqn.outvars if isinstance(v, jex.Var)]
        if not (eqn.effects or any(wanted)):
            continue
        inner = eqn.params.get("jaxpr") if eqn.primitive.name in _CALLS else None
        if isinstance(inner, jex.ClosedJaxpr) and not eqn.effects:
            flags = _used_inputs(inner.jaxpr, [not isinstance(v, jex.Var) or v in used for v in eqn.outvars])
            used.update(v for v, f in zip(eqn.invars, flags, strict=True) if f and isinstance(v, jex.Var))
        else:
            used.update(v for v in eqn.invars if isinstance(v, jex.Var))
    return [v in used for v in jaxpr.invars]


__all__ = ["read_leaves"]
