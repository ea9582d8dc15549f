"""Shared machinery of the navigation suites: :class:`NavigationBase`, what the paper's and
Safety-Gymnasium's navigation tasks share (placeables built, bound, moved and respawned by label),
and :class:`NavigationSuite`, the paper's (Goal, Button, Circle, Push): walls, hazards, layout
sampling and the lidar/compass observation.

Walls are sensed (docs/SPEC.md section 7, decision 54): in a walled arena the hazard pseudo-lidar and the
hazard compasses read ``task["obstacles"]``, the hazards plus the point of each wall nearest to
the agent, which :meth:`NavigationSuite.context` adds to the task each step; the natural hazard
lidar casts against hazards and walls.
"""

from __future__ import annotations

import types
from typing import Any

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import NAVIGATION, Body
from crax.core import scene
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, Choice, Param
from crax.core.scene import GROUP_HAZARD, GROUP_WALL
from crax.costs.base import Constraint
from crax.costs.contact import HazardContact
from crax.costs.proximity import HazardProximity
from crax.objects.base import Placeable
from crax.objects.placement import sample_layout
from crax.objects.walls import WALL_NAMES, wall_points
from crax.sensors.compass import Compass
from crax.sensors.lidar import Lidar, NaturalLidar
from crax.suites.base import Suite

__all__ = ["ARENA_PARAMS", "NAVIGATION_PARAMS", "WALL_NAMES", "NavigationBase", "NavigationSuite"]

NAVIGATION_PARAMS = {
    "cost_scale": Param(2.0, NON_NEGATIVE, "weight of the hazard zones' proximity cost"),
    "lidar": Param("pseudo", Choice(("pseudo", "natural")),
                   "lidar kind: pseudo (object centres, analytic) or natural (rays, mjx.ray)"),
    "lidar_bins": Param(16, POSITIVE_COUNT, "bins of each lidar"),
    "lidar_max_dist": Param(3.0, POSITIVE, "range of the lidars (m)"),
    "hazard_compasses": Param(8, COUNT, "compasses to the nearest hazards (and walls' nearest points)"),
    "num_candidates": Param(64, POSITIVE_COUNT, "layout candidates per object"),
}
"""The parameters every navigation suite takes (Goal, Button, Push, Circle), declared once."""

ARENA_PARAMS = {
    "collision_cost": Param(3.0, NON_NEGATIVE, "cost per collidable hazard or wall in contact"),
    "extent": Param(2.5, POSITIVE, "half-width of the square the layout is drawn in (m)"),
    "wall_extent": Param(3.0, POSITIVE, "distance of the walls from the origin (m)"),
}
"""Those of the walled suites (Goal, Button, Push)."""


class NavigationBase(Suite):
    """What every navigation task shares, the paper's (:class:`NavigationSuite`) and
    Safety-Gymnasium's (:class:`crax.suites.safety_gym.base.SafetyGymSuite`): a body among
    placeables (label -> :class:`~crax.objects.base.Placeable`, :attr:`placeables`, in the order
    they are built and laid out) laid out anew every episode in ``±extent``, moved by label
    (:meth:`move`), kept clear of when one respawns (:meth:`occupied`). Arena, layout draw,
    observation and costs are each line's own.
    """

    agent_keepout = 0.4
    extent: float
    num_candidates: int

    def move(self, data: mjx.Data, positions: dict[str, jax.Array], *, kinematics: bool = True) -> mjx.Data:
        """Moves the given placeables (label -> (count, 2)): their mocap bodies (Push's block: its
        joint) and, with ``kinematics``, their geoms' world positions, so that a natural lidar sees
        a respawned goal in the same step."""
        for label, xy in positions.items():
            data = self.placeables[label].write(data, xy, kinematics=kinematics)
        return data

    def occupied(self, task: dict[str, Any], agent_xy: jax.Array, skip: str) -> jax.Array:
        """(x, y, keepout) rows of the agent and every placeable except ``skip``, for respawning."""
        rows = [jnp.concatenate([agent_xy, jnp.array([self.agent_keepout])])[None]]
        for label, p in self.placeables.items():
            if label != skip and p.count:
                rows.append(jnp.concatenate([task[label], jnp.full((p.count, 1), p.keepout)], axis=-1))
        return jnp.concatenate(rows)


class NavigationSuite(NavigationBase):
    """A navigation task in a walled arena with hazards placed anew every episode.

    Hazards are the placeables in ``self.hazards`` (label -> placeable); zones cost by proximity,
    collidable ones (and the walls) by contact. Subclasses add their goal objects to
    ``self.props`` and write the reward in :meth:`transition`.

    The task state holds every placeable's position by label and ``task["hazards"]`` (all hazard
    positions, concatenated in label order). :meth:`context` adds per-step derived objects to the
    sensors' view of the task: ``"obstacles"`` (hazards and the walls' nearest points) and what a
    subclass's :meth:`sensed` gives (Button's active button).
    """

    requires = frozenset({NAVIGATION})

    def _setup(
        self,
        body: Body,
        level: int,
        hazards: dict[str, Placeable],
        props: dict[str, Placeable],
        values: types.SimpleNamespace,
        *,
        extent: float | None = None,
        agent_extent: float | None = None,
    ) -> None:
        """Stores the configuration and builds the hazard cost terms.

        ``values``: the suite's resolved parameters (:meth:`Suite.resolve`): those of
        :data:`NAVIGATION_PARAMS` and, in a walled arena, of :data:`ARENA_PARAMS` (without
        ``wall_extent`` there are no walls). ``extent``: the layout half-width where the suite
        sets it itself (Circle); ``agent_extent``: the agent starts uniform in ``±agent_extent``
        (Circle) and the layout avoids it; None: the agent is the layout's first object, in ``±extent``.
        """
        if values.lidar not in ("pseudo", "natural"):
            raise ValueError(f"unknown lidar {values.lidar!r}; valid choices: pseudo, natural")
        wall_extent = getattr(values, "wall_extent", None)
        self.body = body
        self.level = level
        self.hazards = nnx.Dict(hazards)
        self.props = nnx.Dict(props)
        self.extent = values.extent if extent is None else extent
        self.wall_extent = wall_extent
        self.num_candidates = values.num_candidates
        self.agent_extent = agent_extent
        self.lidar = values.lidar
        for label, p in (*hazards.items(), *props.items()):
            p.label = label
        contact_geoms = tuple(name for p in hazards.values() for name in p.contact_geoms()) + (
            WALL_NAMES if wall_extent is not None else ())
        constraints: list[Constraint] = [HazardProximity(p, cost_scale=values.cost_scale) for p in hazards.values()
                                          if not p.collidable]
        if contact_geoms:
            constraints.append(HazardContact(contact_geoms, collision_cost=getattr(values, "collision_cost", 0.0)))
        self.constraints = nnx.List(constraints)
        self.lidar_bins = values.lidar_bins
        self.lidar_max_dist = values.lidar_max_dist

    def lidar_for(self, target: str, group: int) -> Lidar | NaturalLidar:
        if self.lidar == "natural":
            return NaturalLidar(group, num_bins=self.lidar_bins, max_dist=self.lidar_max_dist)
        return Lidar(target, num_bins=self.lidar_bins, max_dist=self.lidar_max_dist)

    def compass_for(self, target: str, count: int = 1, **kwargs) -> Compass:
        return Compass(target, count=count, **kwargs)

    def hazard_lidar(self) -> Lidar | NaturalLidar:
        """The hazard lidar: hazards and (in a walled arena) walls."""
        if self.lidar == "natural":
            groups = (GROUP_HAZARD, GROUP_WALL) if self.wall_extent is not None else (GROUP_HAZARD,)
            return NaturalLidar(groups, num_bins=self.lidar_bins, max_dist=self.lidar_max_dist)
        return Lidar("obstacles", num_bins=self.lidar_bins, max_dist=self.lidar_max_dist)

    def hazard_compass(self, count: int) -> Compass:
        """Compasses to the ``count`` nearest hazards and walls' nearest points."""
        return Compass("obstacles", count=count)

    def context(self, model: mjx.Model, data: mjx.Data, task: dict[str, Any]) -> Context:
        ctx = super().context(model, data, task)
        obstacles = task["hazards"]
        if self.wall_extent is not None:
            obstacles = jnp.concatenate([obstacles, wall_points(ctx.agent_xy, self.wall_extent)])
        ctx = ctx.replace(task={**task, "obstacles": obstacles})
        return ctx.replace(task={**ctx.task, **self.sensed(ctx)})

    def sensed(self, ctx: Context) -> dict[str, Any]:
        """Objects the sensors read that are derived from the state each step (none here)."""
        del ctx
        return {}

    @property
    def placeables(self) -> dict[str, Placeable]:
        return {**dict(self.props.items()), **dict(self.hazards.items())}

    def build(self, spec: mujoco.MjSpec) -> None:
        if self.wall_extent is not None:
            scene.add_walls(spec, self.wall_extent)
        super().build(spec)

    def sample_start(self, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        """Places agent, props and hazards without overlaps; returns data and positions by label."""
        k_layout, k_body, k_yaw = jax.random.split(key, 3)
        placeables = self.placeables
        keepout = [p.keepout for p in placeables.values() for _ in range(p.count)]
        if self.agent_extent is None:
            keepout = jnp.asarray([self.agent_keepout, *keepout], jnp.float32)
            xy = sample_layout(k_layout, keepout, self.extent, num_candidates=self.num_candidates)
            agent_xy, start = xy[0], 1
        else:
            k_agent, k_layout = jax.random.split(k_layout)
            agent_xy = jax.random.uniform(k_agent, (2,), minval=-self.agent_extent, maxval=self.agent_extent)
            fixed = jnp.concatenate([agent_xy, jnp.asarray([self.agent_keepout])])[None]
            xy = sample_layout(
                k_layout, jnp.asarray(keepout, jnp.float32), self.extent, num_candidates=self.num_candidates, fixed=fixed
            )
            start = 0
        positions = {}
        for label, p in placeables.items():
            positions[label] = xy[start : start + p.count]
            start += p.count
        qpos, qvel = self.body.initial_state(k_body)
        yaw = jax.random.uniform(k_yaw, (), minval=-jnp.pi, maxval=jnp.pi)
        qpos = self.body.place(qpos, agent_xy, yaw)
        data = self.body.write_state(data, qpos, qvel)
        data = self.move(data, positions)
        return data, {**positions, "hazards": self.hazard_positions(positions)}

    def prepare(self, data: mjx.Data, task: dict[str, Any]) -> mjx.Data:
        """Readies the scene for the next physics step (Button: moves the gremlins to where they
        are during it). Called at the end of :meth:`transition` and at reset; nothing by default."""
        del task
        return data

    def hazard_positions(self, positions: dict[str, jax.Array]) -> jax.Array:
        parts = [positions[label] for label in self.hazards]
        return jnp.concatenate(parts) if parts else jnp.zeros((0, 2), jnp.float32)
