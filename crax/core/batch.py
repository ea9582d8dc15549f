"""How a batch of envs lies in one program: crax's named vmaps, each env's place among them, and
the fields a batch shares.

crax names its vmaps over envs (:data:`ENV_AXIS` in :class:`crax.core.env.Vmap`, :data:`BATCH_AXIS`
where the learners vmap a Vmap once more: their seeds). A physics whose ``Data`` keeps buffers for
a whole batch (MJX's Warp implementation, :mod:`crax.core.physics`: a contact buffer and a few
counters, :data:`SHARED_FIELDS`, which ``jax.vmap`` leaves unbatched and Warp's kernels fill for all
envs at once) reads those names:

* the buffer is sized for the envs of the named vmaps around the reset being traced
  (:func:`crax.core.physics.worlds`), MuJoCo Warp's own per-world estimate times their number. A
  batch that still collides more prints MuJoCo Warp's "narrowphase overflow" and drops the extra
  contacts;
* the buffer's contacts name their env by its index in the batch (``contact__worldid``): the envs of
  all vmaps around the call, flattened outer-major, which :func:`world_index` gives each env
  (:mod:`crax.core.contacts` reads its own);
* code that maps a function over every leaf of a batched state (a reshape, a select) must leave the
  shared fields alone: :func:`map_per_env` and :func:`select` do.

So code above ``crax.core`` says nothing about which physics runs: it names its vmaps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from crax.core.mjx import WARP_SHARED_FIELDS, mjx

SHARED_FIELDS = WARP_SHARED_FIELDS
"""Fields of Warp's ``Data._impl`` that all envs of a batch share (contacts, their counters, sizes)."""


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


def any_in_batch(flag: jax.Array) -> jax.Array:
    """Whether ``flag`` holds for any env stepped together: its maximum over the named vmaps around the
    trace (``flag`` itself outside any). The result is the same for every env, so JAX keeps a
    ``lax.cond`` on it a branch (under ``jax.vmap`` a cond on a per-env flag computes both sides)."""
    out = flag.astype(jnp.int32)
    for name in (ENV_AXIS, BATCH_AXIS):
        try:
            out = jax.lax.pmax(out, name)
        except NameError:  # not inside a vmap of that name
            continue
    return out > 0


def check_batch(data: mjx.Data, one: mjx.Data, env_id: str) -> None:
    """A Warp step's contact buffer (``data``'s) must hold the contacts of the envs it steps with, which
    its contact reads tell apart by crax's named vmaps (:func:`world_index`); ``one`` is the env's data
    for one world. Nothing for the JAX implementation's data."""
    if isinstance(data._impl, mjx.DataJAX):
        return
    per_world = int(one._impl.naconmax)  # pyright: ignore[reportAttributeAccessIssue]
    slots = int(data._impl.contact__dist.shape[0])  # pyright: ignore[reportAttributeAccessIssue]
    _, count = world_index()
    if slots != per_world * count:
        raise ValueError(f"{env_id} on physics='warp' steps in a batch of {count} envs by crax's vmaps, but its "
                         f"state's contact buffer was made for {slots / per_world:g}: batch a Warp env with "
                         f"crax.core.env.Vmap, and name a vmap of that batch {BATCH_AXIS!r}")


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


__all__ = ["BATCH_AXIS", "ENV_AXIS", "SHARED_FIELDS", "check_batch", "is_shared", "map_per_env", "select", "world_index"]
