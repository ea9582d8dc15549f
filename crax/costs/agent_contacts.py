"""Contact points between the agent and objects, counted per object (:func:`contact_counts`) and as a
cost (:class:`AgentContacts`, Safety-Gymnasium's ``cost_gremlins``)."""

from __future__ import annotations

from typing import Protocol

import jax
import jax.numpy as jnp
import mujoco

from crax.core import contacts
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.core.params import TaskParam
from crax.costs.base import Constraint
from crax.costs.contact import contact_tables


class Geoms(Protocol):
    """What :class:`AgentContacts` counts contacts with: geoms of the compiled model, by id, once bound
    (a :class:`~crax.objects.base.Placeable`'s, or :class:`~crax.objects.static_geoms.StaticGeoms`')."""

    geom_ids: tuple[int, ...]


def contact_counts(data: mjx.Data, target_index: tuple[int, ...], is_agent: tuple[bool, ...], n: int) -> jax.Array:
    """Contact points (n,) between an agent geom and each of ``n`` target geoms: the contact slots
    of those pairs with negative distance, as MuJoCo lists a contact per point in ``data.contact``
    (:func:`crax.core.contacts.count`).
    The tables are :func:`crax.costs.contact.contact_tables`'."""
    agent, index = jnp.asarray(is_agent), jnp.asarray(target_index, jnp.int32)

    def bins(dist, g):
        hit = (dist < 0) & (agent[g[:, 0]] | agent[g[:, 1]])
        return jnp.minimum(index[g[:, 0]], index[g[:, 1]]), hit.astype(jnp.float32)

    return contacts.count(data, bins, n)


class AgentContacts(Constraint):
    """``contact_cost`` per contact point between the agent and any geom of ``placeable`` (:class:`Geoms`:
    a placeable, or Race's static walls)
    (Safety-Gymnasium's ``cost_gremlins``: ``contact_cost`` for each agent–gremlin contact).

    MuJoCo and MJX may give a box–box pair a different number of contact points, so the raw
    count may differ from Safety-Gymnasium's while whether there is contact agrees.
    """

    name = "AgentContacts"

    def __init__(self, placeable: Geoms, *, contact_cost: float = 1.0, term: str = "contacts"):
        self.placeable = placeable
        self.contact_cost = TaskParam(jnp.asarray(contact_cost, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        self.target_index, self.is_agent = contact_tables(m, tuple(self.placeable.geom_ids))

    def cost(self, ctx: Context) -> jax.Array:
        counts = contact_counts(ctx.data, self.target_index, self.is_agent, len(self.placeable.geom_ids))
        return self.contact_cost[...] * jnp.sum(counts)
