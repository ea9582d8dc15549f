"""Foot contact: a cost for each restricted foot that touches the floor (SpiderLegs suite)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.core.scene import geom_ids
from crax.costs.base import Constraint
from crax.costs.contact import touched


class FootContact(Constraint):
    """``cost_scale · Σ_f 1[contact(f, floor)]`` over the named foot geoms.

    A foot touches the floor when MJX's contact slot for the pair has a negative distance
    (penetration) in the last collision pass of the step; each foot counts once. Contacts with
    anything but the floor geom(s) cost nothing.

    Args:
      feet: foot geom names in the compiled model (``agent/front_left``).
      floor: the geom names that count as floor.
      cost_scale: the cost of one foot on the floor.
      term: metric name (``cost/<term>``).
    """

    name = "FootContact"

    def __init__(
        self, feet: tuple[str, ...], *, floor: tuple[str, ...] = ("floor",), cost_scale: float = 1.0, term: str = "legs"
    ):
        self.feet = tuple(feet)
        self.floor = tuple(floor)
        self.cost_scale = TaskParam(jnp.asarray(cost_scale, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        missing = [g for g in (*self.feet, *self.floor) if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g) < 0]
        if missing:
            raise ValueError(f"FootContact: geom(s) {', '.join(missing)} not in the model")
        # Static tables over geom ids, with one extra entry for MJX's empty contact slots (geom -1):
        # each geom's foot index (len(feet): not a foot) and whether it is floor.
        index = np.full(m.ngeom + 1, len(self.feet), np.int32)
        index[list(geom_ids(m, self.feet))] = np.arange(len(self.feet))
        floor = np.zeros(m.ngeom + 1, bool)
        floor[list(geom_ids(m, self.floor))] = True
        self.foot_index, self.is_floor = tuple(index.tolist()), tuple(floor.tolist())

    def contacts(self, ctx: Context) -> jax.Array:
        """Which feet touch the floor, (len(feet),) bool."""
        return touched(ctx.data, self.foot_index, self.is_floor, len(self.feet))

    def cost(self, ctx: Context) -> jax.Array:
        return self.cost_scale[...] * jnp.sum(self.contacts(ctx).astype(jnp.float32))
