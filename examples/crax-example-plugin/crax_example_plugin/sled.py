"""Sled: a flat box that slides on the floor, pushed along its heading and turned by a torque.

It declares itself a navigation body, so every navigation suite (Goal, ...) accepts it with no
change to the suite's code: ``crax.make("SledGoal1")``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

import crax.bodies
from crax.core.scene import Category, collide_as


class Sled(crax.bodies.Body):
    """A 0.3 × 0.2 m box on slide x, slide y and hinge z joints; 2 actuators; obs 6.

    Observation: ego-frame planar velocity (2), yaw rate (1), ego-frame planar acceleration (2)
    and the thrust command of the last step (1). Its MJCF is built in code with ``MjSpec``.
    """

    name = "Sled"
    kinds = frozenset({crax.bodies.NAVIGATION})
    timestep = 0.02
    frame_skip = 4
    solver_iterations = 1
    ls_iterations = 4
    reset_noise = 0.005
    floor_contact = False

    def mjcf(self) -> mujoco.MjSpec:
        spec = mujoco.MjSpec()
        torso = spec.worldbody.add_body(name="torso", pos=[0, 0, 0.06])
        for name, kind, axis in (("x", mujoco.mjtJoint.mjJNT_SLIDE, [1, 0, 0]),
                                 ("y", mujoco.mjtJoint.mjJNT_SLIDE, [0, 1, 0]),
                                 ("yaw", mujoco.mjtJoint.mjJNT_HINGE, [0, 0, 1])):
            torso.add_joint(name=name, type=kind, axis=axis, damping=0.05)
        torso.add_geom(name="hull", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.15, 0.1, 0.05], mass=0.5,
                       rgba=[0.9, 0.6, 0.1, 1])
        torso.add_site(name="torso")
        thrust = spec.add_actuator(name="thrust", target="torso", trntype=mujoco.mjtTrn.mjTRN_SITE)
        thrust.gear = [1.0, 0, 0, 0, 0, 0]
        turn = spec.add_actuator(name="turn", target="yaw", trntype=mujoco.mjtTrn.mjTRN_JOINT)
        turn.gear = [0.2, 0, 0, 0, 0, 0]
        for act in (thrust, turn):
            act.ctrlrange = [-1, 1]
            act.ctrllimited = True
        for geom in spec.geoms:
            collide_as(geom, Category.AGENT_FLOATING)
        return spec

    def place(self, qpos: jax.Array, xy: jax.Array, yaw: jax.Array) -> jax.Array:
        return qpos.at[0:2].set(xy).at[2].add(yaw)

    def observe(self, data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        acc = data.qacc[slice(*self.qvel_adr)]
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        rot = jnp.array([[c, s], [-s, c]])
        return jnp.concatenate([rot @ v[:2], v[2:3], rot @ acc[:2], data.ctrl[:1]])
