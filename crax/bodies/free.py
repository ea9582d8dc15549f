"""`FreeBody`: a robot whose root is a free joint (Ant, Spider, Humanoid)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.bodies.base import Body
from crax.core.mjx import mjx


def yaw_quat(yaw: jax.Array) -> jax.Array:
    """Unit quaternion (w, x, y, z) of a rotation by ``yaw`` about the world z axis."""
    return jnp.stack([jnp.cos(yaw / 2), jnp.zeros_like(yaw), jnp.zeros_like(yaw), jnp.sin(yaw / 2)])


def quat_mul(a: jax.Array, b: jax.Array) -> jax.Array:
    """Hamilton product ``a ⊗ b`` of (w, x, y, z) quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return jnp.stack([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ])



class FreeBody(Body):
    """A body whose first joint is a free joint on its torso: qpos = (x, y, z, quat, joints...).

    It can be placed anywhere on the plane (:meth:`place` sets x, y and turns the root by ``yaw``
    about the world z axis), so it is a navigation body when its ``kinds`` say so. Reset noise
    perturbs the root quaternion too; :meth:`initial_state` renormalises it. The default
    observation is Gymnasium's: qpos without the root x, y, then qvel.
    """

    def initial_state(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        qpos, qvel = super().initial_state(key)
        quat = qpos[3:7]
        return qpos.at[3:7].set(quat / jnp.linalg.norm(quat)), qvel

    def place(self, qpos: jax.Array, xy: jax.Array, yaw: jax.Array) -> jax.Array:
        return qpos.at[0:2].set(xy).at[3:7].set(quat_mul(yaw_quat(yaw), qpos[3:7]))

    def velocity(self, model: mjx.Model, data: mjx.Data) -> jax.Array:
        return self.qvel(data)[0:3]  # a free joint's linear velocity is in the world frame

    def observe(self, data: mjx.Data) -> jax.Array:
        return jnp.concatenate([self.qpos(data)[2:], self.qvel(data)])
