"""Height limit: a hinge cost on how far a body rises above a ceiling height (Height suite)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint


class HeightLimit(Constraint):
    """``weight · max(0, h − h_max) / margin``, h the world height of a body's origin (the torso).

    ``h_max``, ``weight`` and ``margin`` are :class:`TaskParam` variables: a curriculum may lower
    the ceiling without recompiling.

    Args:
      body: name of the body in the compiled model (``agent/torso``).
      h_max: the height above which the cost starts.
      weight: w.
      margin: δ, the excess height that costs ``weight``.
      term: metric name (``cost/<term>``).
    """

    name = "HeightLimit"

    def __init__(self, body: str, h_max: float, *, weight: float = 0.1, margin: float = 0.08, term: str = "height"):
        if not margin > 0:
            raise ValueError(f"hinge margin must be > 0, got {margin!r}")
        self.body = body
        self.h_max = TaskParam(jnp.asarray(h_max, jnp.float32))
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.margin = TaskParam(jnp.asarray(margin, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, self.body) < 0:
            raise ValueError(f"HeightLimit: no body {self.body!r} in the model")
        self.body_id = int(m.body(self.body).id)

    def height(self, ctx: Context) -> jax.Array:
        return ctx.data.xpos[self.body_id, 2]

    def cost(self, ctx: Context) -> jax.Array:
        excess = jnp.maximum(0.0, self.height(ctx) - self.h_max[...])
        return self.weight[...] * excess / self.margin[...]
