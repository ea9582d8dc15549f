"""Foot-placement cost on Pathway zones (:class:`FootZones`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint
from crax.objects.pathway import PathwayZones

if TYPE_CHECKING:
    pass


class FootZones(Constraint):
    """Foot placement: ``β Σ_i max_f falloff_i(foot f)`` over the feet touching the ground.

    A foot touches the ground when its site is lower than ``ground_height``; a foot in the air
    costs nothing wherever it is. Feet are site names in the compiled model (``agent/bfoot``).
    """

    name = "FootZones"

    def __init__(
        self, zones: PathwayZones, feet: tuple[str, ...], *, beta: float = 1.5, ground_height: float = 0.1,
        term: str = "zones",
    ):
        if not feet:
            raise ValueError("FootZones needs at least one foot site")
        self.zones = zones
        self.feet = tuple(feet)
        self.beta = TaskParam(jnp.asarray(beta, jnp.float32))
        self.ground_height = TaskParam(jnp.asarray(ground_height, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        missing = [f for f in self.feet if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f) < 0]
        if missing:
            sites = [m.site(i).name for i in range(m.nsite)]
            raise ValueError(f"foot site(s) {', '.join(missing)} not in the model; its sites: {', '.join(sites)}")
        self.site_ids = tuple(int(m.site(f).id) for f in self.feet)

    def cost(self, ctx: Context) -> jax.Array:
        feet = ctx.data.site_xpos[np.asarray(self.site_ids)]
        grounded = feet[:, 2] < self.ground_height[...]
        per_foot = self.zones.falloff(feet[:, :2], ctx.task[self.zones.label])
        per_zone = jnp.max(jnp.where(grounded[None, :], per_foot, 0.0), axis=1)
        return self.beta[...] * jnp.sum(per_zone)
