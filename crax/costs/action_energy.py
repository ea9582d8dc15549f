"""Action energy: a cost on the squared size of the action, for any body."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.core.params import NON_NEGATIVE, TaskParam
from crax.costs.base import Constraint


class ActionEnergy(Constraint):
    """``weight · ‖a‖²``, a the step's action as the actuators received it (``ctx.action``:
    clipped to [-1, 1], non-finite entries as 0). Fits every body.

    Args:
      weight: w.
      term: metric name (``cost/<term>``).
    """

    name = "ActionEnergy"
    params = {"weight": NON_NEGATIVE}

    def __init__(self, *, weight: float = 1.0, term: str = "action_energy"):
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        if ctx.action is None:
            raise ValueError("ActionEnergy reads the step's action (Context.action), which this context lacks; "
                             "TaskEnv sets it, a context built by hand must pass action=")
        return self.weight[...] * jnp.sum(jnp.square(ctx.action.astype(jnp.float32)))
