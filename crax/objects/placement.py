"""Layout sampling: fixed-size, vectorized candidate sampling with keep-out radii.

Objects are placed one after another inside a ``lax.scan``; each draws ``num_candidates``
uniform candidates at once and takes the first whose clearance to every already placed object
is at least the sum of their keep-out radii. If none qualifies (a crowded layout), it takes the
candidate with the largest clearance. No open-ended rejection loop, fixed cost, jit-friendly.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

UNROLLED = 2
"""Layouts of at most this many objects are placed by straight-line code rather than a loop."""


def sample_layout(
    key: jax.Array,
    keepout: jax.Array,
    extent: float | jax.Array,
    *,
    num_candidates: int = 64,
    fixed: jax.Array | None = None,
    candidates: Callable[[jax.Array, int], jax.Array] | None = None,
) -> jax.Array:
    """Positions (n, 2) in ``[-extent, extent]²`` for objects with keep-out radii ``keepout`` (n,).

    ``extent`` is one half-width for all objects or one per object, shape (n,) (Safety-Gymnasium
    shrinks each object's square by its own keep-out).

    ``fixed`` (m, 3) lists already occupied spots as (x, y, keepout) that every object avoids.
    ``candidates(key, num_candidates)`` (num_candidates, 2), if given, replaces the uniform draw in
    the square (e.g. a draw in an annulus); ``extent`` is then unused.
    """
    n = keepout.shape[0]
    occupied = jnp.zeros((n, 3)).at[:, 2].set(-jnp.inf)  # (x, y, keepout); -inf: not placed
    if fixed is not None:
        occupied = jnp.concatenate([fixed, occupied])
    offset = 0 if fixed is None else fixed.shape[0]

    half = jnp.broadcast_to(jnp.asarray(extent, jnp.float32), (n,))

    def place(occupied, inputs):
        i, k, r, e = inputs
        if candidates is None:
            cand = jax.random.uniform(k, (num_candidates, 2), minval=-e, maxval=e)
        else:
            cand = candidates(k, num_candidates)
        # written out rather than jnp.linalg.norm(axis=-1): XLA's CPU backend hands a reduction over a
        # trailing axis of 2 to a library kernel whose per-call overhead, paid once per object in a scan
        # of 15-20 objects, dominates an auto-reset; an elementwise sum fuses into one cheap loop
        dx = cand[:, None, 0] - occupied[None, :, 0]
        dy = cand[:, None, 1] - occupied[None, :, 1]
        gap = jnp.sqrt(dx * dx + dy * dy) - occupied[None, :, 2] - r
        clearance = jnp.min(jnp.where(jnp.isfinite(occupied[None, :, 2]), gap, jnp.inf), axis=1)
        ok = clearance >= 0
        choice = jnp.where(jnp.any(ok), jnp.argmax(ok), jnp.argmax(clearance))
        xy = cand[choice]
        return occupied.at[offset + i].set(jnp.concatenate([xy, r[None]])), xy

    keys = jax.random.split(key, n)
    # a respawn (one object, every env step) unrolled: a loop costs its own kernels on a CPU
    _, xy = jax.lax.scan(place, occupied, (jnp.arange(n), keys, keepout, half), unroll=n <= UNROLLED)
    return xy


def layout_fits(xy: jax.Array, keepout: jax.Array) -> jax.Array:
    """Whether every pair of the objects at ``xy`` (n, 2) keeps ``keepout_i + keepout_j`` apart."""
    dx = xy[:, None, 0] - xy[None, :, 0]
    dy = xy[:, None, 1] - xy[None, :, 1]
    gap = jnp.sqrt(dx * dx + dy * dy) - keepout[:, None] - keepout[None, :]
    return jnp.all(jnp.where(jnp.eye(xy.shape[0], dtype=bool), jnp.inf, gap) >= 0)


def sample_fitting_layout(key: jax.Array, keepout: jax.Array, extent: float | jax.Array, *, num_candidates: int = 100,
                          batch: int = 32, max_layouts: int = 2048) -> jax.Array:
    """A layout as Safety-Gymnasium draws one: :func:`sample_layout` (each object at the first of
    ``num_candidates`` uniform draws that keeps clear of those placed before it), drawn again
    whole until every object found such a draw. For layouts too crowded for :func:`sample_layout`'s
    fallback (Safety-Gymnasium's Button: one draw in 38 to 52 fits).

    ``batch`` layouts are drawn at once and the first that fits is taken (the same distribution as
    drawing them one after another); after ``max_layouts`` the first of the last batch is taken as
    it is (Safety-Gymnasium raises after 10 000).
    """
    rounds = -(-max_layouts // batch)

    def draw(k):
        xy = jax.vmap(lambda s: sample_layout(s, keepout, extent, num_candidates=num_candidates))(jax.random.split(k, batch))
        fits = jax.vmap(layout_fits, in_axes=(0, None))(xy, keepout)
        return xy[jnp.argmax(fits)], jnp.any(fits)

    def again(carry):
        _, fits, i, _ = carry
        return ~fits & (i < rounds)

    def body(carry):
        _, _, i, k = carry
        k, sub = jax.random.split(k)
        xy, fits = draw(sub)
        return xy, fits, i + 1, k

    key, sub = jax.random.split(key)
    xy, fits = draw(sub)
    xy, _, _, _ = jax.lax.while_loop(again, body, (xy, fits, jnp.ones((), jnp.int32), key))
    return xy
