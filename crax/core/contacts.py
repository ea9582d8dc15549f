"""An env's contacts as its costs count them, on either MJX implementation (:mod:`crax.core.physics`).

MJX's JAX implementation keeps a contact list per env: a slot for every candidate pair of the model
at its most points, touching or not (``dist`` is the pair's distance, negative in penetration). Its
Warp implementation keeps one buffer for the whole batch: the first ``nacon`` slots hold the
contacts MuJoCo Warp found (``dist`` below the pair's margin), each naming its env
(``contact__worldid``). :func:`count` reduces either over bins that the caller assigns to the
contacts: on Warp once for the whole batch, every env then taking its own row
(:func:`crax.core.batch.world_index`), so an env's cost reads no more than its share of the buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import jax
import jax.numpy as jnp

from crax.core.batch import world_index
from crax.core.mjx import mjx

Bins = Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]]
"""``bins(dist, geom) -> (bin, value)``: per contact slot (``dist`` shape ``(ncon,)``, ``geom``
``(ncon, 2)``, -1 and an infinite ``dist`` in a slot that holds no contact), the bin it counts in,
in ``[0, n]`` (``n``: not counted), and what it adds."""


def count(data: mjx.Data, bins: Bins, n: int, reduce: Literal["add", "max"] = "add", *,
          margin: float = 0.0) -> jax.Array:
    """This env's contacts reduced into ``n`` bins, shape ``(n,)``: ``reduce`` (``"add"`` or ``"max"``) of
    the values :data:`Bins` gives each contact slot, from 0 (``False``) in every bin.

    ``margin`` is the largest distance ``bins`` counts as touching (0: penetration only). MuJoCo Warp
    lists a pair only within its geoms' margin, so a larger one is a ValueError on Warp; the JAX
    implementation lists every candidate pair."""
    if reduce not in ("add", "max"):
        raise ValueError(f"reduce must be 'add' or 'max', got {reduce!r}")
    if isinstance(data._impl, mjx.DataJAX):
        contact = data._impl.contact
        dist, geom = contact.dist, contact.geom
        if dist.shape[0] == 0:
            return jnp.zeros(n, jax.eval_shape(bins, dist, geom)[1].dtype)
        where, value = bins(dist, geom)
        return getattr(jnp.zeros(n + 1, value.dtype).at[where], reduce)(value)[:-1]
    if margin > 0:
        raise ValueError(f"a contact read counts pairs up to {margin} apart (a task parameter, e.g. Button's "
                         "press_margin), which physics='warp' does not list: MuJoCo Warp keeps the pairs within "
                         "their geoms' own margin only. Set that parameter to 0 (touching pairs) or use physics='jax'")
    impl: Any = data._impl  # MuJoCo Warp's fields (mujoco.mjx.warp.types.DataWarp)
    slots = impl.contact__dist.shape[0]
    listed = jnp.arange(slots) < impl.nacon[0]
    dist = jnp.where(listed, impl.contact__dist, jnp.inf)
    geom = jnp.where(listed[:, None], impl.contact__geom, -1)
    world, worlds = world_index()
    owner = jnp.where(listed, impl.contact__worldid, worlds)
    where, value = bins(dist, geom)
    table = getattr(jnp.zeros((worlds + 1) * (n + 1), value.dtype).at[owner * (n + 1) + where], reduce)(value)
    return table.reshape(worlds + 1, n + 1)[world, :-1]


__all__ = ["Bins", "count"]
