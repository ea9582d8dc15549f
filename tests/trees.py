"""Indexing and stacking whole pytrees (an MJX ``Data``, a ``State``) as one compiled program each,
and comparing two of them leaf by leaf.

Done leaf by leaf outside a jit, ``x[i]`` compiles one small program per leaf shape (a
Safety-Gymnasium state has about 100-150 leaves): taking one env of a batch of SafetyPointGoal2
draws cost 3.3-4.4 s cold that way, 0.6-0.7 s as one program, which then serves every index.
Stacking 32 states costs about 2.2 s either way (session 24); :func:`stack` keeps the two symmetric.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np

T = TypeVar("T")


@jax.jit
def _take(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


@jax.jit
def _stack(trees):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def take(tree: T, i: int | tuple[int, ...]) -> T:
    """Entry ``i`` of every leaf's leading axis, or axes for a tuple (``jax.tree.map(lambda x: x[i], tree)``)."""
    return _take(tree, i)


def stack(trees: Sequence[T]) -> T:
    """The trees stacked along a new leading axis (``jax.tree.map(lambda *x: jnp.stack(x), *trees)``)."""
    return _stack(list(trees))


def assert_equal(a, b) -> None:
    """Every leaf of ``a`` equal to ``b``'s to the bit (PRNG keys by their key data); same structure."""
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
