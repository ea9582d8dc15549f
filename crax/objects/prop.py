"""`Prop`: one box that the agent pushes and physics moves (Push's block, Safety-Gymnasium's push box)."""

from __future__ import annotations

import jax
import mujoco

from crax.core import palette
from crax.core.mjx import mjx
from crax.objects.base import Placeable

GROUP_PROP = 5
"""Geom group of movable props (the natural lidar's class for the block)."""


class Prop(Placeable):
    """One box that the agent pushes: the layout places it, physics moves it.

    It is a body named by its label, not a mocap body: its joints (the first of them
    :meth:`root_joint`) carry its pose, :meth:`write` sets them at rest, and :meth:`position` reads
    where physics has moved it. Its geom named by its label is the box itself.

    Args:
      z: height of the box's centre at rest (m).
      keepout: placement clearance radius.
    """

    group = GROUP_PROP
    rgba = palette.BLOCK

    def __init__(self, *, z: float, keepout: float):
        self.count = 1
        self.z = z
        self.keepout = keepout

    def root_joint(self) -> str:
        """Name of the first of the box's joints, whose qpos and dof addresses its pose starts at."""
        raise NotImplementedError

    def bind(self, m: mujoco.MjModel) -> None:
        joint = m.joint(self.root_joint())
        self.qpos_adr = int(joint.qposadr[0])
        self.qvel_adr = int(joint.dofadr[0])
        self.body_ids = (int(m.body(self.label).id),)
        self.geom_ids = (int(m.geom(self.label).id),)
        self.mocap_ids = ()

    def position(self, data: mjx.Data) -> jax.Array:
        """The box's centre on the plane, shape (1, 2) (a class of one object), from the body
        positions of the last kinematics pass like the agent's ``Body.position``."""
        return data.xpos[self.body_ids[0], :2][None]
