"""A batch-mean loss whose gradient is computed chunk by chunk (the critics' regression on a CPU), and
a row-wise function mapped over chunks of rows (the critics' values of a whole rollout).

A minibatch of SPEC's critics (8,192 samples × 5 hidden layers of 256) keeps tens of megabytes of
activations between the forward and the backward pass; on a CPU they leave the cache and every
elementwise pass goes to memory. :func:`chunked_mean` computes the same mean loss and the same
gradient as one pass over the whole batch, but runs forward and backward on one chunk of rows at a
time and adds the chunks' gradients, so each chunk's activations are still in the cache when its
backward pass reads them (docs/performance.md, "The update against the machine's matmul peak";
docs/DECISIONS.md, decision 69). :func:`chunked_rows` does the same for a forward pass alone: GAE's critic values over
the 262,144 rows of SPEC's rollout.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from crax.core import observation

MeanLoss = Callable[[Any, Any], tuple[jax.Array, dict[str, jax.Array]]]
"""``fn(params, batch) -> (loss, metrics)``: the loss and each metric a mean over the batch's rows."""


def chunk_count(rows: int, chunk: int) -> int:
    """The fewest equal chunks of at most ``chunk`` rows that ``rows`` splits into; 1 (no chunking)
    where those chunks would be under a quarter of ``chunk`` (e.g. a prime number of rows)."""
    chunks = next(d for d in range(-(-rows // chunk), rows + 1) if rows % d == 0)
    return chunks if rows // chunks >= min(rows, chunk) / 4 else 1


def chunked_mean(fn: MeanLoss, params: Any, batch: Any, chunks: int) -> tuple[jax.Array, dict[str, jax.Array]]:
    """``fn(params, batch)``, with its gradient with respect to ``params`` taken over ``chunks`` equal chunks.

    ``fn``'s loss and metrics must be means over the rows of ``batch`` (the leading axis of every
    leaf), so that the mean of the chunks' values is the whole batch's; ``chunks`` must divide the
    rows. The value is the mean of the chunks' values and the gradient the mean of their gradients:
    the whole batch's, up to float summation order. Differentiating it runs one ``lax.scan`` over the
    chunks that computes each chunk's loss and gradient together; ``batch`` is data (it gets no
    gradient) and so are the metrics. With ``chunks`` 1 it is ``fn(params, batch)`` itself.
    """
    if chunks == 1:
        return fn(params, batch)
    rows = {x.shape[0] for x in jax.tree.leaves(batch)}
    if len(rows) != 1 or next(iter(rows)) % chunks:
        raise ValueError(f"chunked_mean: {chunks} chunks must divide the batch's rows; its leaves have {sorted(rows)}")
    return _chunked(fn, chunks, params, jax.lax.stop_gradient(batch))


def _split(batch: Any, chunks: int) -> Any:
    return jax.tree.map(lambda x: x.reshape(chunks, x.shape[0] // chunks, *x.shape[1:]), batch)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _chunked(fn: MeanLoss, chunks: int, params: Any, batch: Any) -> tuple[jax.Array, dict[str, jax.Array]]:
    out = jax.lax.map(lambda b: fn(params, b), _split(batch, chunks))
    return jax.tree.map(lambda x: x.mean(0), out)


def _chunked_fwd(fn: MeanLoss, chunks: int, params: Any, batch: Any):
    def step(total, b):
        (loss, metrics), grads = jax.value_and_grad(fn, has_aux=True)(params, b)
        return jax.tree.map(jnp.add, total, (loss, metrics, grads)), None

    split = _split(batch, chunks)
    shapes = jax.eval_shape(lambda b: (*fn(params, b), params), jax.tree.map(lambda x: x[0], split))
    zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
    (loss, metrics, grads), _ = jax.lax.scan(step, zeros, split)
    loss, metrics, grads = jax.tree.map(lambda x: x / chunks, (loss, metrics, grads))
    return (loss, metrics), (grads, batch)


def _chunked_bwd(fn: MeanLoss, chunks: int, residuals, cotangent):
    grads, batch = residuals
    d_loss, _ = cotangent  # the metrics are data, as the docstring says
    return jax.tree.map(lambda g: d_loss * g, grads), jax.tree.map(jnp.zeros_like, batch)


_chunked.defvjp(_chunked_fwd, _chunked_bwd)


def chunked_rows(fn: Callable[[Any], Any], x: Any, chunk: int) -> Any:
    """``fn(x)`` for a row-wise ``fn`` (each output row depends on its input row only), computed over
    the rows of ``x``'s leading axes flattened, :func:`chunk_count` equal chunks of at most ``chunk``
    rows at a time in a ``lax.map``. ``x`` is an observation: an array whose last axis is a row's, or a
    dict of the state vector and images (:mod:`crax.core.observation`; the leading axes are the state
    vector's). Every output leaf comes back with ``x``'s leading axes. The same values as ``fn(x)`` up to
    float rounding; with one chunk it is ``fn(x)`` itself."""
    lead = observation.lead_shape(x)
    rows = math.prod(lead)
    chunks = chunk_count(rows, chunk) if rows else 1
    if chunks == 1:
        return fn(x)
    split = jax.tree.map(lambda v: v.reshape(chunks, rows // chunks, *v.shape[len(lead):]), x)
    out = jax.lax.map(fn, split)
    return jax.tree.map(lambda y: y.reshape(*lead, *y.shape[2:]), out)
