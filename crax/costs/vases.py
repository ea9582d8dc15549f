"""Costs of Safety-Gymnasium's vases: touching them and moving them (:class:`VaseContact`, :class:`VaseVelocity`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core import contacts
from crax.core.context import Context
from crax.core.params import TaskParam
from crax.core.scene import body_geom_ids
from crax.costs.base import Constraint
from crax.objects.vases import Vases


class VaseContact(Constraint):
    """``contact_cost`` per contact point between a vase and the agent (Safety-Gymnasium's
    ``cost_vases_contact``): MJX's contact slots of agent–vase pairs with negative distance.

    MuJoCo and MJX may give a box–box pair a different number of contact points, so the raw
    count may differ from Safety-Gymnasium's while whether there is contact agrees.
    """

    name = "VaseContact"

    def __init__(self, vases: Vases, *, contact_cost: float = 1.0, term: str = "vases_contact"):
        self.vases = vases
        self.contact_cost = TaskParam(jnp.asarray(contact_cost, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        vase = np.zeros(m.ngeom + 1, bool)
        vase[list(self.vases.geom_ids)] = True
        agent = np.zeros(m.ngeom + 1, bool)
        agent[list(body_geom_ids(m, "agent/"))] = True
        self.is_vase, self.is_agent = tuple(vase.tolist()), tuple(agent.tolist())

    def cost(self, ctx: Context) -> jax.Array:
        vase, agent = jnp.asarray(self.is_vase), jnp.asarray(self.is_agent)

        def bins(dist, g):  # one bin: the agent–vase pairs in penetration
            pair = (vase[g[:, 0]] & agent[g[:, 1]]) | (vase[g[:, 1]] & agent[g[:, 0]])
            return jnp.where(pair, 0, 1), (dist < 0).astype(jnp.float32)

        return self.contact_cost[...] * contacts.count(ctx.data, bins, 1)[0]


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
