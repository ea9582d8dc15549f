"""Push's block: a box that slides on the floor when pushed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.mjx import mjx
from crax.core.scene import Category, collide_as
from crax.objects.prop import Prop


class Block(Prop):
    """A box of half-size ``half`` that the agent pushes over the floor: the layout places it,
    physics moves it.

    It rides on planar joints (slide x, slide y, hinge z) at rest height, like the Point itself,
    and its sliding friction on the floor is the joints' Coulomb friction loss ``friction`` (N per
    axis; about μ·m·g) instead of box–floor contacts. A free box pushed by the Point tips over and
    at the Point's 0.02 s timestep blows up even with 4 solver iterations (and its 4 floor contacts
    per substep would cost more than the rest of the scene); the planar block cannot tip and
    needs 1 iteration. The walls stop it through the slide joints' limits at ``±limit`` (the wall
    minus the half-size: two limit rows instead of 16 box–wall contacts; a turned block's corner
    may reach 4 cm into a wall). Its geom is in the ``PROP_FLOATING`` collision category: the
    agent pushes it (a frictionless contact, one solver row), and it passes through hazards
    (the paper is silent on it: docs/SPEC.md section 7, decision 52). Not a mocap body: :meth:`write`
    sets its joints (at rest) instead.

    Args:
      half: half-size of the box.
      density: kg/m³ (2 g for the default box: a Point pushes it at about half its free speed).
      friction: friction loss of the slide joints (N) and, times ``half``, of the hinge (N·m).
      keepout: placement clearance radius.
      limit: the block's centre stays in ``±limit`` on both axes (None: unlimited).
    """

    name = "Block"

    def __init__(
        self,
        half: float = 0.1,
        *,
        density: float = 0.25,
        friction: float = 0.005,
        keepout: float = 0.2,
        limit: float | None = None,
    ):
        super().__init__(z=half, keepout=keepout)
        self.limit = limit
        self.half = half
        self.density = density
        self.friction = friction

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        self.label = label
        body = spec.worldbody.add_body(name=label, pos=[0.0, 0.0, self.z])
        bounds = {} if self.limit is None else {"limited": True, "range": [-self.limit, self.limit]}
        for axis, name in (((1, 0, 0), "x"), ((0, 1, 0), "y")):
            body.add_joint(name=f"{label}/{name}", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=axis,
                           frictionloss=self.friction, **bounds)
        # the box's tiny rotational inertia spins up on glancing pushes: damp the hinge a little
        body.add_joint(name=f"{label}/yaw", type=mujoco.mjtJoint.mjJNT_HINGE, axis=(0, 0, 1),
                       frictionloss=self.friction * self.half, damping=0.0005)
        g = body.add_geom(
            name=label, type=mujoco.mjtGeom.mjGEOM_BOX, size=[self.half] * 3, density=self.density,
            group=self.group, rgba=list(self.rgba), condim=1, priority=1,
        )
        collide_as(g, Category.PROP_FLOATING)

    def root_joint(self) -> str:
        return f"{self.label}/x"

    def write(self, data: mjx.Data, xy: jax.Array, *, kinematics: bool = True) -> mjx.Data:
        del kinematics  # placed only at reset, before mjx.forward
        qpos = jnp.concatenate([xy[0], jnp.zeros(1, xy.dtype)])
        return data.replace(
            qpos=data.qpos.at[self.qpos_adr : self.qpos_adr + 3].set(qpos),
            qvel=data.qvel.at[self.qvel_adr : self.qvel_adr + 3].set(0.0),
        )
