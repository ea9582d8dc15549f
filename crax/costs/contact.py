"""Cost of touching hazards (:class:`HazardContact`) and the contact tables it reads."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core import contacts
from crax.core.context import Context
from crax.core.params import TaskParam
from crax.core.scene import body_geom_ids, geom_ids
from crax.costs.base import Constraint


def contact_tables(m: mujoco.MjModel, target_ids: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Static lookup tables for :func:`touched`: each geom's target index (``len(target_ids)`` for
    none; the extra last entry serves MJX's empty contact slots, geom -1) and whether it is an
    agent geom (every collidable geom under ``agent/``)."""
    target = np.full(m.ngeom + 1, len(target_ids), np.int32)
    target[list(target_ids)] = np.arange(len(target_ids))
    agent = np.zeros(m.ngeom + 1, bool)
    agent[list(body_geom_ids(m, "agent/"))] = True
    return tuple(target.tolist()), tuple(agent.tolist())


def touched(
    data, target_index: tuple[int, ...], is_agent: tuple[bool, ...], n: int, margin: float = 0.0
) -> jax.Array:
    """Which of ``n`` target geoms are in contact with an agent geom, shape (n,): their distance
    (negative: penetration) is below ``margin`` in the contacts of the last collision pass
    (:func:`crax.core.contacts.count`)."""
    agent = jnp.asarray(is_agent)
    index = jnp.asarray(target_index, jnp.int32)

    def bins(dist, g):
        return jnp.minimum(index[g[:, 0]], index[g[:, 1]]), (dist < margin) & (agent[g[:, 0]] | agent[g[:, 1]])

    return contacts.count(data, bins, n, "max", margin=margin)


class HazardContact(Constraint):
    """``collision_cost`` for each target geom in contact with any agent geom (penetration < 0).

    Targets are given by geom name; the agent's geoms are every collidable geom under ``agent/``.
    """

    name = "HazardContact"

    def __init__(self, geoms: tuple[str, ...], *, collision_cost: float = 3.0, term: str = "contact"):
        self.geoms = tuple(geoms)
        self.collision_cost = TaskParam(jnp.asarray(collision_cost, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        self.target_index, self.is_agent = contact_tables(m, geom_ids(m, self.geoms))

    def cost(self, ctx: Context) -> jax.Array:
        hits = touched(ctx.data, self.target_index, self.is_agent, len(self.geoms))
        return self.collision_cost[...] * jnp.sum(hits)
