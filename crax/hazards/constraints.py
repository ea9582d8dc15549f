"""Constraint (cost) terms. Each term gives one scalar cost per step, ``metrics["cost/<term>"]``.

Their weights and thresholds are :class:`TaskParam` variables: ``nnx.split`` exposes them as a
pytree that can be vmapped (one bound per env) or changed between curriculum stages without
rebuilding the physics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, Literal

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.hazards.base import Placeable
from crax.scene import body_geom_ids, geom_ids
from crax.sensors.base import Context

if TYPE_CHECKING:
    from crax.suites.params import Choice, Range


class TaskParam(nnx.Variable):
    """A task quantity that may be swept or scheduled without recompiling the physics model."""


class Constraint(nnx.Module):
    """A cost term: :meth:`cost` maps a :class:`Context` to a scalar cost ≥ 0.

    Class attributes used when a term is added to a task by name (``crax.make(...,
    constraints={name: {parameter: value}})``, see :mod:`crax.compose`):
      requires: body kinds the term needs (like a suite's ``requires``).
      params: valid values of its constructor's parameters by name (:mod:`crax.suites.params`),
        checked before the model is built.
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    params: ClassVar[Mapping[str, Range | Choice]] = {}
    term: str
    """Metric name: the cost appears as ``metrics["cost/<term>"]``."""

    def build(self, spec: mujoco.MjSpec) -> None:
        """Adds MJCF the term needs to the scene before it is compiled (most add none)."""

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
    (negative: penetration) is below ``margin`` in MJX's contact list of the last collision pass
    (which holds every candidate pair, touching or not)."""
    contact = data._impl.contact
    if contact.dist.shape[0] == 0 or n == 0:
        return jnp.zeros(n, bool)
    g = contact.geom
    agent = jnp.asarray(is_agent)
    index = jnp.asarray(target_index, jnp.int32)
    hit = (contact.dist < margin) & (agent[g[:, 0]] | agent[g[:, 1]])
    t = jnp.minimum(index[g[:, 0]], index[g[:, 1]])
    return jnp.zeros(n + 1, bool).at[t].max(hit)[:-1]


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


class OutOfBounds(Constraint):
    """``boundary_cost · 1[|x| > x_bound ∨ |y| > y_bound]`` of the agent centre (Circle); a bound of
    None is no bound on that axis."""

    name = "OutOfBounds"

    def __init__(self, x_bound: float | None, y_bound: float | None, *, boundary_cost: float = 1.0, term: str = "boundary"):
        inf = float("inf")
        self.x_bound = TaskParam(jnp.asarray(inf if x_bound is None else x_bound, jnp.float32))
        self.y_bound = TaskParam(jnp.asarray(inf if y_bound is None else y_bound, jnp.float32))
        self.boundary_cost = TaskParam(jnp.asarray(boundary_cost, jnp.float32))
        self.term = term

    def cost(self, ctx: Context) -> jax.Array:
        x, y = ctx.agent_xy[0], ctx.agent_xy[1]
        out = (jnp.abs(x) > self.x_bound[...]) | (jnp.abs(y) > self.y_bound[...])
        return self.boundary_cost[...] * out.astype(jnp.float32)


class TaskEvent(Constraint):
    """``weight · task[key]``: a cost for an event the suite detected in its transition and wrote
    into the task state (Button's wrong press, ``task["wrong_button"]`` ∈ {0, 1})."""

    name = "TaskEvent"

    def __init__(self, key: str, *, weight: float = 1.0, term: str | None = None):
        self.key = key
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.term = term or key

    def cost(self, ctx: Context) -> jax.Array:
        return self.weight[...] * ctx.task[self.key].astype(jnp.float32)


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
