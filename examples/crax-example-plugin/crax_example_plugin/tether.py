"""Tether: a constraint term that any navigation task takes by name, with no change to the suite.

``crax.make("PointGoal1", constraints={"Tether": {"radius": 1.5}})`` or
``crax train ppo-lag --env PointGoal1 --constraint tether:radius=1.5``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import crax.bodies
from crax.core.params import NON_NEGATIVE, POSITIVE
from crax.costs import Constraint, TaskParam
from crax.sensors import Context


class Tether(Constraint):
    """``weight · max(0, ‖xy‖ − radius)``: a cost for straying farther than ``radius`` from the
    arena centre, ``xy`` the agent's position on the plane. Fits navigation bodies.

    Args:
      radius: the leash length (m).
      weight: cost per metre beyond it.
      term: metric name (``cost/<term>``).
    """

    name = "Tether"
    requires = frozenset({crax.bodies.NAVIGATION})
    params = {"radius": POSITIVE, "weight": NON_NEGATIVE}

    def __init__(self, *, radius: float = 2.0, weight: float = 1.0, term: str = "tether"):
        self.radius = TaskParam(jnp.asarray(radius, jnp.float32))
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        return self.weight[...] * jnp.maximum(0.0, jnp.linalg.norm(ctx.agent_xy) - self.radius[...])
