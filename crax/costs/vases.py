"""Costs of Safety-Gymnasium's vases: touching them and moving them (:class:`VaseContact`, :class:`VaseVelocity`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.agent_contacts import AgentContacts
from crax.costs.base import Constraint
from crax.objects.vases import Vases


class VaseContact(AgentContacts):
    """``contact_cost`` per contact point between a vase and the agent (Safety-Gymnasium's
    ``cost_vases_contact``): the :class:`~crax.costs.agent_contacts.AgentContacts` of the vases."""

    name = "VaseContact"

    def __init__(self, vases: Vases, *, contact_cost: float = 1.0, term: str = "vases_contact"):
        super().__init__(vases, contact_cost=contact_cost, term=term)


class VaseVelocity(Constraint):
    """``velocity_cost`` × speed summed over vases moving at ``velocity_threshold`` m/s or more
    (Safety-Gymnasium's ``cost_vases_velocity``)."""

    name = "VaseVelocity"

    def __init__(self, vases: Vases, *, velocity_cost: float = 1.0, velocity_threshold: float = 1e-4,
                 term: str = "vases_velocity"):
        self.vases = vases
        self.velocity_cost = TaskParam(jnp.asarray(velocity_cost, jnp.float32))
        self.velocity_threshold = TaskParam(jnp.asarray(velocity_threshold, jnp.float32))
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        speed = self.vases.speed(ctx.data)
        return self.velocity_cost[...] * jnp.sum(jnp.where(speed >= self.velocity_threshold[...], speed, 0.0))
