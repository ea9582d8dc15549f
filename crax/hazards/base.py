"""Placeable objects: hazards, goals and props that a suite puts in the scene as mocap bodies."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.scene import GROUP_HAZARD, Category, add_mocap

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
    """

    name: ClassVar[str]
    collidable: ClassVar[bool] = False
    group: ClassVar[int] = GROUP_HAZARD
    rgba: ClassVar[tuple[float, ...]] = (0.2, 0.3, 0.9, 0.6)

    count: int
    keepout: float
    z: float

    def geom(self) -> dict:
        raise NotImplementedError

    def ray_proxy(self) -> dict | None:
        """An extra ray-only geom for shapes MJX cannot ray-cast (cylinders), or None."""
        return None

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        category = Category.HAZARD if self.collidable else None
        for i in range(self.count):
            body = add_mocap(spec, f"{label}/{i}", {**self.geom(), "group": self.group, "rgba": list(self.rgba)}, category)
            proxy = self.ray_proxy()
            if proxy is not None:
                g = body.add_geom(name=f"{label}/{i}/ray", group=self.group, rgba=list(RAY_PROXY_RGBA), material="_default", **proxy)
                g.contype = g.conaffinity = 0

    def bind(self, m: mujoco.MjModel) -> None:
        self.mocap_ids = tuple(int(m.body_mocapid[m.body(f"{self.label}/{i}").id]) for i in range(self.count))
        self.geom_ids = tuple(int(m.geom(f"{self.label}/{i}").id) for i in range(self.count))

    def mocap_pos(self, xy: jax.Array) -> jax.Array:
        """Mocap positions (count, 3) for planar positions (count, 2)."""
        return jnp.concatenate([xy, jnp.full((xy.shape[0], 1), self.z, xy.dtype)], axis=-1)

    def cost(self, agent_xy: jax.Array, xy: jax.Array) -> jax.Array:
        """Per-object proximity cost (count,) of an agent at ``agent_xy``; zones override it."""
        return jnp.zeros(xy.shape[0], jnp.float32)
