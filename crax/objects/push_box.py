"""Safety-Gymnasium's push box: a free box with four corner posts that the agent pushes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core import palette
from crax.core.mjx import mjx
from crax.core.scene import Category, collide_as
from crax.objects.prop import Prop


class PushBox(Prop):
    """Safety-Gymnasium 1.0.0's push box (``assets/free_geoms/push_box.py``, geometry from ``world.py``).

    One body on a free joint carrying five boxes of ``density``: a cube of half-size ``size`` and,
    at its four vertical edges ``(±size, ±size)``, posts of half-size ``(size/2, size/2, size)``,
    so each face has a recess between two posts that the Point's front fits into. Every geom has
    condim 6 and MuJoCo's default friction, as Safety-Gymnasium's scene gives it. It rests on the
    floor (centre at height ``size``, as Safety-Gymnasium starts it) and touches the agent (its
    collision category is ``PROP``) and :class:`~crax.objects.pillars.SafetyGymPillars`; it
    passes over hazards and the goal, which collide with nothing. Unlike :class:`~crax.objects.block.Block`
    (the paper's Push block, on planar joints) it may tilt and bounce. Not a mocap body:
    :meth:`write` sets the free joint at rest with a yaw; :meth:`position` reads where physics
    has moved it.

    Args:
      size: half-size of the cube (m; Safety-Gymnasium: 0.2).
      density: kg/m³ of every geom (Safety-Gymnasium: 0.001, so 0.128 g in all).
      keepout: placement clearance radius.
    """

    name = "PushBox"
    rgba = palette.SAFETY_GYM["push_box"]

    def __init__(self, *, size: float = 0.2, density: float = 0.001, keepout: float = 0.2):
        super().__init__(z=size, keepout=keepout)
        self.size = size
        self.density = density

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        body = spec.worldbody.add_body(name=label, pos=[0.0, 0.0, self.z])
        body.add_freejoint(name=label)
        s, h = self.size, self.size / 2
        parts = [(label, [s, s, s], [0.0, 0.0, 0.0])] + [
            (f"{label}/post{i}", [h, h, s], [x * s, y * s, 0.0])
            for i, (x, y) in enumerate(((1, 1), (-1, 1), (1, -1), (-1, -1)))
        ]
        for name, size, pos in parts:
            g = body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=size, pos=pos, density=self.density,
                              condim=6, group=self.group, rgba=list(self.rgba))
            collide_as(g, Category.PROP)

    def root_joint(self) -> str:
        return self.label

    def write(self, data: mjx.Data, xy: jax.Array, *, kinematics: bool = True, yaw: jax.Array | None = None) -> mjx.Data:
        """Puts the box at rest at ``xy`` (1, 2), turned by ``yaw`` (1,) about z (None: 0)."""
        del kinematics  # placed at reset, before mjx.forward
        half = jnp.zeros((), xy.dtype) if yaw is None else 0.5 * yaw[0]
        zero = jnp.zeros_like(half)
        pose = jnp.concatenate([xy[0], jnp.full((1,), self.z, xy.dtype),
                                jnp.stack([jnp.cos(half), zero, zero, jnp.sin(half)])])
        return data.replace(qpos=data.qpos.at[self.qpos_adr: self.qpos_adr + 7].set(pose),
                            qvel=data.qvel.at[self.qvel_adr: self.qvel_adr + 6].set(0.0))

    def centre(self, data: mjx.Data) -> jax.Array:
        """The box's centre in space (3,), as Safety-Gymnasium's distances read it."""
        return data.xpos[self.body_ids[0]]
