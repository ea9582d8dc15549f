"""The :class:`Constraint` component: a cost term giving one scalar cost ≥ 0 per step, ``metrics["cost/<term>"]``.

Its weights and thresholds are :class:`crax.core.params.TaskParam` variables: ``nnx.split`` exposes them as a
pytree that can be vmapped (one bound per env) or changed between curriculum stages without rebuilding the physics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import jax
import mujoco
from flax import nnx

from crax.core.context import Context

if TYPE_CHECKING:
    from crax.core.params import Choice, Range


class Constraint(nnx.Module):
    """A cost term: :meth:`cost` maps a :class:`Context` to a scalar cost ≥ 0.

    Class attributes used when a term is added to a task by name (``crax.make(...,
    constraints={name: {parameter: value}})``, see :mod:`crax.tasks.compose`):
      requires: body kinds the term needs (like a suite's ``requires``).
      params: valid values of its constructor's parameters by name (:mod:`crax.core.params`),
        checked before the model is built.
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    params: ClassVar[Mapping[str, Range | Choice]] = {}
    term: str
    """Metric name: the cost appears as ``metrics["cost/<term>"]``."""

    def build(self, spec: mujoco.MjSpec) -> None:
        """Adds MJCF the term needs to the scene before it is compiled (most add none)."""

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled model."""

    def cost(self, ctx: Context) -> jax.Array:
        raise NotImplementedError
