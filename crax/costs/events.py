"""One-off costs on task events: a flag the suite sets (:class:`TaskEvent`, :class:`TerminalCost`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint

if TYPE_CHECKING:
    pass


class TaskEvent(Constraint):
    """``weight · task[key]``: a cost for an event the suite detected in its transition and wrote
    into the task state (Button's wrong press, ``task["wrong_button"]`` ∈ {0, 1})."""

    name = "TaskEvent"

    def __init__(self, key: str, *, weight: float = 1.0, term: str | None = None):
        self.key = key
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.term = term or key

    def cost(self, ctx: Context) -> jax.Array:
        return self.weight[...] * ctx.task[self.key].astype(jnp.float32)


class TerminalCost(Constraint):
    """``cost · 1[task[key]]``: a one-off cost on the step a flag is set (Pathway: the body fell)."""

    name = "TerminalCost"

    def __init__(self, cost: float = 5.0, *, key: str = "fell", term: str = "fall"):
        self.value = TaskParam(jnp.asarray(cost, jnp.float32))
        self.key = key
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        return self.value[...] * ctx.task[self.key].astype(jnp.float32)
