"""Cost of leaving the arena (:class:`OutOfBounds`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint

if TYPE_CHECKING:
    pass


class OutOfBounds(Constraint):
    """``boundary_cost · 1[|x| > x_bound ∨ |y| > y_bound]`` of the agent centre (Circle); a bound of
    None is no bound on that axis."""

    name = "OutOfBounds"

    def __init__(self, x_bound: float | None, y_bound: float | None, *, boundary_cost: float = 1.0, term: str = "boundary"):
        inf = float("inf")
        self.x_bound = TaskParam(jnp.asarray(inf if x_bound is None else x_bound, jnp.float32))
        self.y_bound = TaskParam(jnp.asarray(inf if y_bound is None else y_bound, jnp.float32))
        self.boundary_cost = TaskParam(jnp.asarray(boundary_cost, jnp.float32))
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        x, y = ctx.agent_xy[0], ctx.agent_xy[1]
        out = (jnp.abs(x) > self.x_bound[...]) | (jnp.abs(y) > self.y_bound[...])
        return self.boundary_cost[...] * out.astype(jnp.float32)
