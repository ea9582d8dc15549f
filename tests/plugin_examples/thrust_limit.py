"""ThrustLimit: a cost term on the step's action, for any task."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.params import NON_NEGATIVE, Range
from crax.costs import Constraint, TaskParam
from crax.sensors import Context


class ThrustLimit(Constraint):
    """``weight · max(0, |a₀| − limit)``: a cost for driving the first actuator harder than
    ``limit``, a the step's action as the actuators received it (``ctx.action``, in [-1, 1]).
    Fits every body.

    Args:
      limit: the free part of the action's range.
      weight: cost per unit of action beyond it.
      term: metric name (``cost/<term>``).
    """

    name = "ThrustLimit"
    params = {"limit": Range(0.0, 1.0), "weight": NON_NEGATIVE}

    def __init__(self, *, limit: float = 0.5, weight: float = 1.0, term: str = "thrust"):
        self.limit = TaskParam(jnp.asarray(limit, jnp.float32))  # sweepable without recompiling
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        return self.weight[...] * jnp.maximum(0.0, jnp.abs(ctx.action[0]) - self.limit[...])
