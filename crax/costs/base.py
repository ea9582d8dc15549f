"""The :class:`Constraint` component: a cost term giving one scalar cost ≥ 0 per step, ``metrics["cost/<term>"]``.

Its weights and thresholds are :class:`crax.core.params.TaskParam` variables: ``nnx.split`` exposes them as a
pytree that can be vmapped (one bound per env) or changed between curriculum stages without rebuilding the physics.
"""

from __future__ import annotations

import jax

from crax.core.component import Component
from crax.core.context import Context


class Constraint(Component):
    """A cost term: :meth:`cost` maps a :class:`Context` to a scalar cost ≥ 0 (its ``requires``,
    ``params``, ``build`` and ``bind`` as every :class:`~crax.core.component.Component`'s)."""

    term: str
    """Metric name: the cost appears as ``metrics["cost/<term>"]``."""

    def cost(self, ctx: Context) -> jax.Array:
        raise NotImplementedError
