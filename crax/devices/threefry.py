"""Runs JAX's random-number hash on XLA:CPU as straight-line code rather than as a loop.

Every ``jax.random`` draw and key split hashes its counters with Threefry-2x32: five blocks of four
rounds. On a CPU, jax lowers those blocks as a five-iteration ``while`` loop (to keep the compile of
programs with thousands of draws short); on the other platforms, as the twenty rounds written out.
XLA:CPU runs each loop iteration as separate small kernels, which is slow when the draw is small and
repeated, as in an env step of PointGoal1 (a goal respawn's candidates, its key splits, auto-reset's
key split; docs/DECISIONS.md, decision 72, has the profile).

:func:`install` registers, for the CPU, the lowering jax uses elsewhere, inlined into the program, so
that XLA fuses the rounds with the arithmetic around them. The hash is the same integer arithmetic in
the same order: every key and every random number is bit-identical, and programs compile no slower
(an env step and reset of PointGoal1, a learner's iteration). Like :mod:`crax.devices.lapack` it
relies on jax internals; without them, or with ``CRAX_UNROLL_THREEFRY=0`` (read by
:func:`crax.devices.startup.configure_jax`), jax's own lowering stays.
"""

from __future__ import annotations

import functools

_installed = False


def install() -> bool:
    """Registers the straight-line CPU lowering of Threefry-2x32 (once); returns whether it is active."""
    global _installed
    if _installed:
        return True
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32
    except ImportError:  # a future jax without these internals: keep its own lowering
        return False
    prim = getattr(threefry2x32, "threefry2x32_p", None)
    lowering = getattr(threefry2x32, "_threefry2x32_lowering", None)
    if prim is None or lowering is None:
        return False
    rule = mlir.lower_fun(functools.partial(lowering, use_rolled_loops=False), multiple_results=True)
    mlir.register_lowering(prim, rule, platform="cpu")
    _installed = True
    return True
