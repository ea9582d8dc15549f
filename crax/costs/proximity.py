"""Cost of being inside hazard zones (:class:`HazardProximity`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint
from crax.objects.base import Placeable

if TYPE_CHECKING:
    pass


class HazardProximity(Constraint):
    """Sum over a placeable's zones of ``cost_scale · zone.cost(agent)`` (cylinder or cube zones)."""

    name = "HazardProximity"

    def __init__(self, zones: Placeable, *, cost_scale: float = 2.0, term: str | None = None):
        self.zones = zones
        self.cost_scale = TaskParam(jnp.asarray(cost_scale, jnp.float32))
        self._term = term

    @property
    def term(self) -> str:
        return self._term or self.zones.label

    def cost(self, ctx: Context) -> jax.Array:
        return self.cost_scale[...] * jnp.sum(self.zones.cost(ctx.agent_xy, ctx.task[self.zones.label]))
