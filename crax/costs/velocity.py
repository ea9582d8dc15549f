"""Cost of moving faster than a threshold (:class:`VelocityThreshold`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import jax
import jax.numpy as jnp

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint

if TYPE_CHECKING:
    pass


class VelocityThreshold(Constraint):
    """Speed limit: ``w · 1[v > τ]`` (binary) or ``w · max(0, v − τ)`` (hinge).

    ``v`` is ``ctx.task["velocity"]``, written by the suite (planar speed or forward velocity).
    """

    name = "VelocityThreshold"

    def __init__(self, threshold: float, *, mode: Literal["binary", "hinge"] = "binary", weight: float = 1.0):
        if mode not in ("binary", "hinge"):
            raise ValueError(f"unknown cost_mode {mode!r}; valid choices: binary, hinge")
        self.threshold = TaskParam(jnp.asarray(threshold, jnp.float32))
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.mode = mode
        self.term = "velocity"

    def cost(self, ctx: Context) -> jax.Array:
        v, tau = ctx.task["velocity"], self.threshold[...]
        excess = (v > tau).astype(jnp.float32) if self.mode == "binary" else jnp.maximum(0.0, v - tau)
        return self.weight[...] * excess
