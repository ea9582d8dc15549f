"""Safety-Gymnasium's vases: light free boxes on the floor that the agent can knock over."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core import palette
from crax.core.mjx import mjx
from crax.core.scene import Category, collide_as
from crax.objects.base import Placeable
from crax.objects.block import GROUP_PROP


class Vases(Placeable):
    """``count`` free-floating boxes (Safety-Gymnasium 1.0.0's ``Vases``), moved only by physics.

    Each vase is a body ``<label>/<i>`` with a free joint and one box geom of half-size ``size``
    and ``density`` (Safety-Gymnasium: 0.1 m, 0.001 kg/m³, so 8 mg), condim 6, resting ``sink``
    below its nominal height as Safety-Gymnasium starts it. Its collision category is ``PROP``:
    it touches the floor, the agent and walls, not other vases (Safety-Gymnasium's vases also
    collide with each other; they only meet when the agent pushes one into another). Not a mocap
    body: :meth:`write` sets the free joints at rest with a yaw per vase; :meth:`position` reads
    where physics has moved them. Their costs are :mod:`crax.costs.vases`.

    Args:
      count: number of vases.
      size: half-size of the box (m).
      density: kg/m³.
      sink: how far below ``size`` the centre starts (m).
      keepout: placement clearance radius.
    """

    name = "Vases"
    group = GROUP_PROP
    rgba = palette.VASE

    def __init__(self, count: int, *, size: float = 0.1, density: float = 0.001, sink: float = 4e-5,
                 keepout: float = 0.15):
        self.count = count
        self.size = size
        self.density = density
        self.sink = sink
        self.keepout = keepout
        self.z = size - sink

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        for i in range(self.count):
            body = spec.worldbody.add_body(name=f"{label}/{i}", pos=[0.0, 0.0, self.z])
            body.add_freejoint(name=f"{label}/{i}")
            g = body.add_geom(name=f"{label}/{i}", type=mujoco.mjtGeom.mjGEOM_BOX, size=[self.size] * 3,
                              density=self.density, condim=6, group=self.group, rgba=list(self.rgba))
            collide_as(g, Category.PROP)

    def bind(self, m: mujoco.MjModel) -> None:
        joints = [m.joint(f"{self.label}/{i}") for i in range(self.count)]
        self.qpos_adr = tuple(int(j.qposadr[0]) for j in joints)
        self.qvel_adr = tuple(int(j.dofadr[0]) for j in joints)
        self.body_ids = tuple(int(m.body(f"{self.label}/{i}").id) for i in range(self.count))
        self.geom_ids = tuple(int(m.geom(f"{self.label}/{i}").id) for i in range(self.count))
        self.mocap_ids = ()

    def write(self, data: mjx.Data, xy: jax.Array, *, kinematics: bool = True, yaw: jax.Array | None = None) -> mjx.Data:
        """Puts the vases at rest at ``xy`` (count, 2), turned by ``yaw`` (count,) about z (None: 0)."""
        del kinematics  # placed at reset, before mjx.forward
        yaw = jnp.zeros(xy.shape[0], xy.dtype) if yaw is None else yaw
        quat = jnp.stack([jnp.cos(yaw / 2), jnp.zeros_like(yaw), jnp.zeros_like(yaw), jnp.sin(yaw / 2)], axis=-1)
        pose = jnp.concatenate([xy, jnp.full((xy.shape[0], 1), self.z, xy.dtype), quat], axis=-1)
        q = jnp.asarray(self.qpos_adr)[:, None] + jnp.arange(7)
        v = jnp.asarray(self.qvel_adr)[:, None] + jnp.arange(6)
        return data.replace(qpos=data.qpos.at[q].set(pose), qvel=data.qvel.at[v].set(0.0))

    def position(self, data: mjx.Data) -> jax.Array:
        """The vases' centres on the plane (count, 2), from the last kinematics pass."""
        return data.xpos[jnp.asarray(self.body_ids), :2]

    def speed(self, data: mjx.Data) -> jax.Array:
        """Each vase's linear speed (count,): the norm of its free joint's world-frame velocity."""
        v = data.qvel[jnp.asarray(self.qvel_adr)[:, None] + jnp.arange(3)]
        return jnp.sqrt(jnp.sum(v * v, axis=-1))
