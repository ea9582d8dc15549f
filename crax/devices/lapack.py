"""Keeps batched LAPACK calls on XLA:CPU from deadlocking the intra-op thread pool.

jaxlib's CPU LAPACK kernels (Cholesky ``potrf``, triangular solve ``trsm``, ...) split a batch
whose estimated work reaches 2e5 FLOP into chunks, schedule the chunks on XLA's intra-op thread
pool and block the calling thread until they finish (``ParallelBatchMap``). The calling thread
is itself a worker of that pool whenever XLA runs the op asynchronously, so when as many of these
ops run at once as the pool has threads (2 on a 2-core machine), every worker waits for chunks
that no free worker is left to run: the process hangs at 0% CPU. MJX factors the mass matrix and
the Newton solver's Hessian with independent Cholesky calls batched over all envs, so a batched
MJX step of a body with contacts (Spider: nv = 18, 1944 FLOP per factorization) deadlocks once
more than ~100 envs step together.

:func:`install` re-registers the CPU lowerings of ``cholesky_p`` and ``triangular_solve_p`` (the
only LAPACK ops MJX uses: ``cho_factor``/``cho_solve``) so that a batch is split into several
LAPACK calls, each below that work threshold: each then runs inline on its thread and never
waits on the pool. Results are bit-identical (the same LAPACK routine per matrix); independent
chunk calls can still run in parallel. Opt out with ``CRAX_SPLIT_LAPACK=0``.
"""

from __future__ import annotations

import math

import numpy as np

from crax.devices import settings

# jaxlib's GetLapackBatchChunkSize: a batch runs single-threaded while batch * cost < 200000.
_MIN_WORK_PER_TASK = 200_000
# Up to this many chunks are separate calls (parallel); beyond, a lax.map loop over chunks.
_MAX_UNROLLED = 8

_installed = False


def _cholesky_cost(avals, params) -> int:
    n = avals[0].shape[-1]
    return (n * n * n // 3) * (3 if np.issubdtype(avals[0].dtype, np.complexfloating) else 1)


def _trsm_cost(avals, params) -> int:
    rows, cols = avals[1].shape[-2:]
    cost = rows * cols * (rows if params["left_side"] else cols)
    return cost * (3 if np.issubdtype(avals[1].dtype, np.complexfloating) else 1)


def _max_chunk(cost: int) -> int:
    """Largest batch that jaxlib's LAPACK kernels run without the thread pool, for a per-matrix cost."""
    return max(1, (_MIN_WORK_PER_TASK - 1) // max(cost, 1))


def _split_lowering(prim, rule, cost):
    """A lowering of ``prim`` that applies ``rule`` to batch chunks small enough to run inline."""
    import jax
    import jax.numpy as jnp
    from jax._src.interpreters import mlir

    def lower(ctx, *args, **params):
        avals = ctx.avals_in
        batch_shape = tuple(avals[0].shape[:-2])
        batch = math.prod(batch_shape)
        chunk = _max_chunk(cost(avals, params))
        if batch <= chunk:
            return rule(ctx, *args, **params)
        num = -(-batch // chunk)
        size = -(-batch // num)  # equal chunks, each still <= chunk

        def split(*xs, **params):
            flat = [x.reshape((batch, *x.shape[-2:])) for x in xs]
            if num <= _MAX_UNROLLED:
                outs = [prim.bind(*(f[i:i + size] for f in flat), **params) for i in range(0, batch, size)]
                out = jnp.concatenate(outs)
            else:  # repeat the last matrix to fill the last chunk; its results are dropped
                pad = num * size - batch
                blocks = [jnp.pad(f, ((0, pad), (0, 0), (0, 0)), mode="edge").reshape((num, size, *f.shape[1:]))
                          for f in flat]
                out = jax.lax.map(lambda b: prim.bind(*b, **params), tuple(blocks))
                out = out.reshape((num * size, *out.shape[2:]))[:batch]
            return out.reshape((*batch_shape, *out.shape[-2:]))

        return mlir.lower_fun(split, multiple_results=False)(ctx, *args, **params)

    return lower


def install() -> bool:
    """Registers the splitting CPU lowerings (once); returns whether they are active."""
    global _installed
    if _installed:
        return True
    if not settings.switch(settings.SPLIT_LAPACK):
        return False
    try:
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg
    except ImportError:  # a future jax without these internals: keep its own lowerings
        return False
    rules = (
        (getattr(linalg, "cholesky_p", None), getattr(linalg, "_cholesky_cpu_lowering", None), _cholesky_cost),
        (getattr(linalg, "triangular_solve_p", None), getattr(linalg, "_triangular_solve_cpu_lower", None),
         _trsm_cost),
    )
    ready = [(p, r, c) for p, r, c in rules if p is not None and r is not None]
    if len(ready) < len(rules):
        return False
    for prim, rule, cost in ready:
        mlir.register_lowering(prim, _split_lowering(prim, rule, cost), platform="cpu")
    _installed = True
    return True
