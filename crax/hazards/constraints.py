"""Constraint (cost) terms. Each term gives one scalar cost per step, ``metrics["cost/<term>"]``.

Their weights and thresholds are :class:`TaskParam` variables: ``nnx.split`` exposes them as a
pytree that can be vmapped (one bound per env) or changed between curriculum stages without
rebuilding the physics.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.hazards.base import Placeable
from crax.scene import body_geom_ids, geom_ids
from crax.sensors.base import Context


class TaskParam(nnx.Variable):
    """A task quantity that may be swept or scheduled without recompiling the physics model."""


class Constraint(nnx.Module):
    """A cost term: :meth:`cost` maps a :class:`Context` to a scalar cost ≥ 0."""

    name: ClassVar[str]
    term: str
    """Metric name: the cost appears as ``metrics["cost/<term>"]``."""

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled model."""

    def cost(self, ctx: Context) -> jax.Array:
        raise NotImplementedError


class HazardProximity(Constraint):
    """Sum over a placeable's zones of ``cost_scale · zone.cost(agent)`` (cylinder or cube zones)."""

    name = "HazardProximity"

    def __init__(self, zones: Placeable, *, cost_scale: float = 2.0, term: str | None = None):
        self.zones = zones
        self.cost_scale = TaskParam(jnp.asarray(cost_scale, jnp.float32))
        self._term = term

    @property
    def term(self) -> str:
        return self._term or self.zones.label

    def cost(self, ctx: Context) -> jax.Array:
        return self.cost_scale[...] * jnp.sum(self.zones.cost(ctx.agent_xy, ctx.task[self.zones.label]))


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
        target = np.full(m.ngeom + 1, len(self.geoms), np.int32)  # index -1 (empty slot) -> "none"
        target[list(geom_ids(m, self.geoms))] = np.arange(len(self.geoms))
        agent = np.zeros(m.ngeom + 1, bool)
        agent[list(body_geom_ids(m, "agent/"))] = True
        self.target_index = tuple(target.tolist())
        self.is_agent = tuple(agent.tolist())

    def cost(self, ctx: Context) -> jax.Array:
        contact = ctx.data._impl.contact
        if contact.dist.shape[0] == 0 or not self.geoms:
            return jnp.zeros((), jnp.float32)
        g = contact.geom
        is_agent = jnp.asarray(self.is_agent)
        index = jnp.asarray(self.target_index, jnp.int32)
        hit = (contact.dist < 0) & (is_agent[g[:, 0]] | is_agent[g[:, 1]])
        t = jnp.minimum(index[g[:, 0]], index[g[:, 1]])
        touched = jnp.zeros(len(self.geoms) + 1, bool).at[t].max(hit)[:-1]
        return self.collision_cost[...] * jnp.sum(touched)


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
