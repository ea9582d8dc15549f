"""Placeable objects: hazards, goals and props that a suite puts in the scene as mocap bodies."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.core import palette
from crax.core.mjx import mjx
from crax.core.scene import GROUP_HAZARD, Category, add_mocap, collide_as

RAY_PROXY_RGBA = (1.0, 1.0, 1.0, 0.0)


class Placeable(nnx.Module):
    """``count`` copies of one object, each a mocap body moved at reset (no recompiling).

    Subclasses give the geom (:meth:`geom`), the mocap height ``z`` and whether it collides.
    The suite gives each placeable a *label*; its mocap bodies are ``<label>/<i>`` and its
    positions live in ``info["task"][label]`` with shape (count, 2).

    Attributes:
      count: number of copies.
      keepout: placement clearance radius (other objects keep ``keepout_i + keepout_j`` away).
      collidable: its geoms collide with the agent.
      group: MJCF geom group (its lidar class for the natural lidar).
      rgba: colour of its geoms, in the model and in renders (built-ins: :mod:`crax.core.palette`); a class
        attribute that an instance may override (Safety-Gymnasium's goal takes its alpha).
    """

    name: ClassVar[str]
    collidable: ClassVar[bool] = False
    group: ClassVar[int] = GROUP_HAZARD
    rgba: tuple[float, ...] = palette.HAZARD_ZONE  # the class's colour; an instance may set its own

    count: int
    keepout: float
    z: float

    def geom(self) -> dict:
        raise NotImplementedError

    def ray_proxy(self) -> dict | None:
        """An extra ray-only geom for shapes MJX cannot ray-cast (cylinders), or None."""
        return None

    def collision_proxy(self) -> dict | None:
        """An extra collision-only geom ``<label>/<i>/collision`` that collides in place of the
        (then visual-only) geom, for shapes whose contacts MJX computes slowly; None: the geom
        collides itself. Only for collidable placeables."""
        return None

    def contact_geoms(self) -> tuple[str, ...]:
        """Names of the geoms whose contacts with the agent are contacts with this placeable."""
        suffix = "/collision" if self.collision_proxy() is not None else ""
        return tuple(f"{self.label}/{i}{suffix}" for i in range(self.count)) if self.collidable else ()

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        collider = self.collision_proxy() if self.collidable else None
        category = Category.HAZARD if self.collidable and collider is None else None
        for i in range(self.count):
            body = add_mocap(spec, f"{label}/{i}", {**self.geom(), "group": self.group, "rgba": list(self.rgba)}, category)
            proxy = self.ray_proxy()
            if proxy is not None:
                g = body.add_geom(name=f"{label}/{i}/ray", group=self.group, rgba=list(RAY_PROXY_RGBA), material="_default", **proxy)
                g.contype = g.conaffinity = 0
            if collider is not None:  # group 0: no lidar casts against it
                g = body.add_geom(name=f"{label}/{i}/collision", group=0, rgba=list(RAY_PROXY_RGBA), **collider)
                collide_as(g, Category.HAZARD)

    def bind(self, m: mujoco.MjModel) -> None:
        bodies = [m.body(f"{self.label}/{i}") for i in range(self.count)]
        self.body_ids = tuple(int(b.id) for b in bodies)
        self.mocap_ids = tuple(int(m.body_mocapid[b.id]) for b in bodies)
        self.geom_ids = tuple(int(m.geom(f"{self.label}/{i}").id) for i in range(self.count))
        # every geom of every copy (the ray proxies too), with its copy and its offset in the body
        rows = [(i, g) for i, b in enumerate(self.body_ids)
                for g in range(int(m.body_geomadr[b]), int(m.body_geomadr[b] + m.body_geomnum[b]))]
        self.all_geom_copy = tuple(i for i, _ in rows)
        self.all_geom_ids = tuple(g for _, g in rows)
        self.all_geom_offset = tuple(tuple(float(v) for v in m.geom_pos[g]) for _, g in rows)

    def mocap_pos(self, xy: jax.Array) -> jax.Array:
        """Mocap positions (count, 3) for planar positions (count, 2)."""
        return jnp.concatenate([xy, jnp.full((xy.shape[0], 1), self.z, xy.dtype)], axis=-1)

    def write(self, data: mjx.Data, xy: jax.Array, *, kinematics: bool = True) -> mjx.Data:
        """Moves the copies to ``xy`` (count, 2): their mocap positions and, with ``kinematics``,
        the world positions of their bodies and geoms, which ``mjx.ray`` and the contact-free
        sensors read before the next ``mjx.forward`` (mocap bodies never turn, so a geom sits at
        its body's position plus its fixed offset)."""
        pos = self.mocap_pos(xy)
        data = data.replace(mocap_pos=data.mocap_pos.at[jnp.asarray(self.mocap_ids)].set(pos))
        if not kinematics:
            return data
        geom = pos[jnp.asarray(self.all_geom_copy)] + jnp.asarray(self.all_geom_offset, pos.dtype)
        return data.replace(
            xpos=data.xpos.at[jnp.asarray(self.body_ids)].set(pos),
            geom_xpos=data.geom_xpos.at[jnp.asarray(self.all_geom_ids)].set(geom),
        )

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        """Per-object proximity cost (count,) of an agent at ``agent_xy``; zones override it."""
        return jnp.zeros(xy.shape[0], jnp.float32)
