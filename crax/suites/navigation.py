"""Shared machinery of the navigation suites (Goal, Button, Circle, Push): walls, hazards,
layout sampling and the lidar/compass observation."""

from __future__ import annotations

from typing import Any, Literal

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax import scene
from crax._mjx import mjx
from crax.bodies.base import NAVIGATION, Body
from crax.hazards.base import Placeable
from crax.hazards.constraints import HazardContact, HazardProximity
from crax.hazards.placement import sample_layout
from crax.sensors.compass import Compass
from crax.sensors.lidar import Lidar, NaturalLidar
from crax.suites.base import Suite

WALL_NAMES = ("wall_east", "wall_west", "wall_north", "wall_south")


class NavigationSuite(Suite):
    """A navigation task in a walled arena with hazards placed anew every episode.

    Hazards are the placeables in ``self.hazards`` (label -> placeable); zones cost by proximity,
    collidable ones (and the walls) by contact. Subclasses add their goal objects to
    ``self.props`` and write the reward in :meth:`transition`.
    """

    requires = frozenset({NAVIGATION})
    agent_keepout = 0.4

    def _setup(
        self,
        body: Body,
        level: int,
        hazards: dict[str, Placeable],
        props: dict[str, Placeable],
        *,
        cost_scale: float,
        collision_cost: float,
        lidar: Literal["pseudo", "natural"],
        lidar_bins: int,
        lidar_max_dist: float,
        extent: float,
        wall_extent: float | None,
        num_candidates: int,
    ) -> None:
        if lidar not in ("pseudo", "natural"):
            raise ValueError(f"unknown lidar {lidar!r}; valid choices: pseudo, natural")
        self.body = body
        self.level = level
        self.hazards = nnx.Dict(hazards)
        self.props = nnx.Dict(props)
        self.extent = extent
        self.wall_extent = wall_extent
        self.num_candidates = num_candidates
        self.lidar = lidar
        for label, p in (*hazards.items(), *props.items()):
            p.label = label
        contact_geoms = tuple(
            f"{label}/{i}" for label, p in hazards.items() if p.collidable for i in range(p.count)
        ) + (WALL_NAMES if wall_extent is not None else ())
        constraints = [HazardProximity(p, cost_scale=cost_scale) for p in hazards.values() if not p.collidable]
        if contact_geoms:
            constraints.append(HazardContact(contact_geoms, collision_cost=collision_cost))
        self.constraints = nnx.List(constraints)
        self.lidar_bins = lidar_bins
        self.lidar_max_dist = lidar_max_dist

    def lidar_for(self, target: str, group: int) -> Lidar | NaturalLidar:
        if self.lidar == "natural":
            return NaturalLidar(group, num_bins=self.lidar_bins, max_dist=self.lidar_max_dist)
        return Lidar(target, num_bins=self.lidar_bins, max_dist=self.lidar_max_dist)

    def compass_for(self, target: str, count: int = 1) -> Compass:
        return Compass(target, count=count)

    @property
    def placeables(self) -> dict[str, Placeable]:
        return {**dict(self.props.items()), **dict(self.hazards.items())}

    def build(self, spec: mujoco.MjSpec) -> None:
        if self.wall_extent is not None:
            scene.add_walls(spec, self.wall_extent)
        for label, p in self.placeables.items():
            p.build(spec, label)

    def bind(self, m: mujoco.MjModel) -> None:
        for p in self.placeables.values():
            p.bind(m)
        super().bind(m)

    def sample_start(self, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        """Places agent, props and hazards without overlaps; returns data and positions by label."""
        k_layout, k_body, k_yaw = jax.random.split(key, 3)
        placeables = self.placeables
        keepout = jnp.asarray(
            [self.agent_keepout] + [p.keepout for p in placeables.values() for _ in range(p.count)], jnp.float32
        )
        xy = sample_layout(k_layout, keepout, self.extent, num_candidates=self.num_candidates)
        positions, start = {}, 1
        for label, p in placeables.items():
            positions[label] = xy[start : start + p.count]
            start += p.count
        qpos, qvel = self.body.initial_state(k_body)
        yaw = jax.random.uniform(k_yaw, (), minval=-jnp.pi, maxval=jnp.pi)
        qpos = self.body.place(qpos, xy[0], yaw)
        data = data.replace(
            qpos=data.qpos.at[slice(*self.body.qpos_adr)].set(qpos),
            qvel=data.qvel.at[slice(*self.body.qvel_adr)].set(qvel),
        )
        data = self.move(data, positions)
        return data, {**positions, "hazards": self.hazard_positions(positions)}

    def move(self, data: mjx.Data, positions: dict[str, jax.Array]) -> mjx.Data:
        """Writes the mocap positions of the given placeables."""
        ids, pos = [], []
        for label, xy in positions.items():
            p = self.placeables[label]
            ids.extend(p.mocap_ids)
            pos.append(p.mocap_pos(xy))
        if not ids:
            return data
        return data.replace(mocap_pos=data.mocap_pos.at[jnp.asarray(ids)].set(jnp.concatenate(pos)))

    def hazard_positions(self, positions: dict[str, jax.Array]) -> jax.Array:
        parts = [positions[label] for label in self.hazards]
        return jnp.concatenate(parts) if parts else jnp.zeros((0, 2), jnp.float32)

    def occupied(self, task: dict[str, Any], agent_xy: jax.Array, skip: str) -> jax.Array:
        """(x, y, keepout) rows of the agent and every placeable except ``skip``, for respawning."""
        rows = [jnp.concatenate([agent_xy, jnp.array([self.agent_keepout])])[None]]
        for label, p in self.placeables.items():
            if label != skip and p.count:
                rows.append(jnp.concatenate([task[label], jnp.full((p.count, 1), p.keepout)], axis=-1))
        return jnp.concatenate(rows)
