"""Indexing and stacking whole pytrees (an MJX ``Data``, a ``State``) as one compiled program each.

Done leaf by leaf outside a jit, ``x[i]`` and ``jnp.stack`` compile one small program per leaf
shape: a Safety-Gymnasium state has about 150 leaves, and a test that unstacked and restacked a
batch of resets spent 4-6 s compiling them (session 24's probe: 71 s over the suite). One jit over
the tree compiles once per tree structure and shapes, for every index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import jax
import jax.numpy as jnp

T = TypeVar("T")


@jax.jit
def _take(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


@jax.jit
def _stack(trees):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def take(tree: T, i: int) -> T:
    """Entry ``i`` of every leaf's leading axis (``jax.tree.map(lambda x: x[i], tree)``)."""
    return _take(tree, i)


def stack(trees: Sequence[T]) -> T:
    """The trees stacked along a new leading axis (``jax.tree.map(lambda *x: jnp.stack(x), *trees)``)."""
    return _stack(list(trees))
