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


def site_imu(rot: jax.Array, qvel: jax.Array, qacc: jax.Array, offset: jax.Array, gravity: jax.Array,
             magnetic: jax.Array) -> jax.Array:
    """Accelerometer, velocimeter, gyro and magnetometer (12) of a site fixed at ``offset`` on a free
    body, with the body's axes, as MuJoCo's sensors read them: ``rot`` the body's orientation (body ->
    world), ``qvel`` and ``qacc`` its free joint's six (the root's world velocity and acceleration,
    then the angular velocity and acceleration in the body frame)."""
    r = rot @ offset  # root -> site, world frame
    omega = rot @ qvel[3:6]
    alpha = rot @ qacc[3:6]
    site_acc = qacc[0:3] + jnp.cross(alpha, r) + jnp.cross(omega, jnp.cross(omega, r))
    site_vel = qvel[0:3] + jnp.cross(omega, r)
    return jnp.concatenate([rot.T @ (site_acc - gravity), rot.T @ site_vel, qvel[3:6], rot.T @ magnetic])


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
