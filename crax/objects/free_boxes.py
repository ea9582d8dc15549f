"""`FreeBoxes`: boxes on free joints that physics moves, as Safety-Gymnasium builds its vases and gremlins."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.mjx import mjx
from crax.core.scene import Category, collide_as
from crax.objects.base import Placeable
from crax.objects.prop import GROUP_PROP


def yaw_quat(yaw: jax.Array) -> jax.Array:
    """Quaternions (k, 4) of turns by ``yaw`` (k,) about z."""
    zero = jnp.zeros_like(yaw)
    return jnp.stack([jnp.cos(yaw / 2), zero, zero, jnp.sin(yaw / 2)], axis=-1)


class FreeBoxes(Placeable):
    """``count`` boxes that physics moves: each a body ``<label>/<i>`` on a free joint with one box
    geom of half-size ``size`` and ``density``, condim 6, as Safety-Gymnasium's free geoms have.

    Their collision category is ``PROP``: they touch the floor, the agent and walls, not each
    other. Not mocap bodies: :meth:`write` sets the free joints at rest, each box turned by its
    yaw; :meth:`position` reads where physics has moved them. A subclass adds to each box what it
    needs besides (:meth:`add_box`).

    Args:
      count: number of boxes.
      size: half-size of the boxes (m).
      density: kg/m³.
      keepout: placement clearance radius.
      z: height of the boxes' centres at rest (m).
    """

    group = GROUP_PROP

    def __init__(self, count: int, *, size: float, density: float, keepout: float, z: float):
        self.count = count
        self.size = size
        self.density = density
        self.keepout = keepout
        self.z = z

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        for i in range(self.count):
            self.add_box(spec, f"{label}/{i}")

    def add_box(self, spec: mujoco.MjSpec, name: str) -> None:
        """Adds one box: the body ``name``, its free joint and its geom (both also ``name``)."""
        body = spec.worldbody.add_body(name=name, pos=[0.0, 0.0, self.z])
        body.add_freejoint(name=name)
        g = body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[self.size] * 3, density=self.density,
                          condim=6, group=self.group, rgba=list(self.rgba))
        collide_as(g, Category.PROP)

    def bind(self, m: mujoco.MjModel) -> None:
        joints = [m.joint(f"{self.label}/{i}") for i in range(self.count)]
        self.qpos_adr = tuple(int(j.qposadr[0]) for j in joints)
        self.qvel_adr = tuple(int(j.dofadr[0]) for j in joints)
        self.body_ids = tuple(int(m.body(f"{self.label}/{i}").id) for i in range(self.count))
        self.geom_ids = tuple(int(m.geom(f"{self.label}/{i}").id) for i in range(self.count))
        self.mocap_ids = ()

    def write(self, data: mjx.Data, xy: jax.Array, *, kinematics: bool = True, yaw: jax.Array | None = None) -> mjx.Data:
        """Puts the boxes at rest at ``xy`` (count, 2), turned by ``yaw`` (count,) about z (None: 0)."""
        del kinematics  # placed at reset, before mjx.forward
        yaw = jnp.zeros(xy.shape[0], xy.dtype) if yaw is None else yaw
        pose = jnp.concatenate([xy, jnp.full((xy.shape[0], 1), self.z, xy.dtype), yaw_quat(yaw)], axis=-1)
        q = jnp.asarray(self.qpos_adr)[:, None] + jnp.arange(7)
        v = jnp.asarray(self.qvel_adr)[:, None] + jnp.arange(6)
        return data.replace(qpos=data.qpos.at[q].set(pose), qvel=data.qvel.at[v].set(0.0))

    def position(self, data: mjx.Data) -> jax.Array:
        """The boxes' centres on the plane (count, 2), from the last kinematics pass."""
        return data.xpos[jnp.asarray(self.body_ids), :2]
