"""Cost of touching Safety-Gymnasium's pillars (:class:`PillarContact`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core import contacts
from crax.core.context import Context
from crax.core.scene import body_geom_ids
from crax.costs.agent_contacts import AgentContacts
from crax.objects.base import Placeable


class PillarContact(AgentContacts):
    """``contact_cost`` per (agent geom, pillar) pair in contact (Safety-Gymnasium's ``cost_pillars``).

    Safety-Gymnasium counts the contacts between an agent geom and a pillar; MuJoCo gives each
    such pair one contact point (its convex collision), while MJX may give a pair two (a box
    against the capsule a pillar collides as), so crax counts touching pairs, not contact points
    (:class:`~crax.costs.agent_contacts.AgentContacts`): the Point's sphere and front box touching
    one pillar cost 2, as there. The pillars' contacts are those of their colliders
    (``contact_geoms``: the capsules).
    """

    name = "PillarContact"
    placeable: Placeable

    def __init__(self, pillars: Placeable, *, contact_cost: float = 1.0, term: str = "pillars"):
        super().__init__(pillars, contact_cost=contact_cost, term=term)

    def bind(self, m: mujoco.MjModel) -> None:
        agent_geoms = body_geom_ids(m, "agent/")
        pillar_geoms = [int(m.geom(name).id) for name in self.placeable.contact_geoms()]
        agent = np.full(m.ngeom + 1, len(agent_geoms), np.int32)
        agent[list(agent_geoms)] = np.arange(len(agent_geoms))
        pillar = np.full(m.ngeom + 1, len(pillar_geoms), np.int32)
        pillar[pillar_geoms] = np.arange(len(pillar_geoms))
        self.agent_index, self.pillar_index = tuple(agent.tolist()), tuple(pillar.tolist())
        self.shape = (len(agent_geoms), len(pillar_geoms))

    def cost(self, ctx: Context) -> jax.Array:
        agent, pillar = jnp.asarray(self.agent_index), jnp.asarray(self.pillar_index)
        rows, width = self.shape[0] + 1, self.shape[1] + 1  # the last row and column: no agent geom, no pillar

        def bins(dist, g):  # a bin per cell of that table; the last cell is not counted
            a = jnp.minimum(agent[g[:, 0]], agent[g[:, 1]])
            p = jnp.minimum(pillar[g[:, 0]], pillar[g[:, 1]])
            return a * width + p, dist < 0

        cells = contacts.count(ctx.data, bins, rows * width - 1, "max")
        pairs = jnp.append(cells, False).reshape(rows, width)[:-1, :-1]
        return self.contact_cost[...] * jnp.sum(pairs).astype(jnp.float32)
