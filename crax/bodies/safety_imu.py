"""The inertial readings of Safety-Gymnasium's navigation agents: accelerometer, velocimeter, gyro and
magnetometer of a site fixed on a free-jointed torso, as MuJoCo's sensors read them (crax runs MJX
without its sensor stage)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.mjx import mjx

IMU_KEYS = (("accelerometer", 3), ("velocimeter", 3), ("gyro", 3), ("magnetometer", 3))
"""Safety-Gymnasium's observation keys of the four readings (:func:`site_imu`'s, in its order) and their sizes."""


def field_options(m: mujoco.MjModel) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The model's gravity and magnetic field, as :func:`site_imu`'s and :func:`origin_imu`'s
    accelerometer and magnetometer read them (bodies keep them from ``bind``)."""
    return tuple(float(g) for g in m.opt.gravity), tuple(float(b) for b in m.opt.magnetic)


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


def origin_imu(data: mjx.Data, torso_id: int, qvel_adr: tuple[int, int], gravity: tuple[float, ...],
               magnetic: tuple[float, ...]) -> jax.Array:
    """:func:`site_imu` of a site at the torso's origin, on its axes (the Car's and the Doggo's):
    ``qvel_adr`` the free joint's first dof and the body's end, ``gravity`` and ``magnetic`` the
    model's options."""
    return site_imu(data.xmat[torso_id], data.qvel[slice(*qvel_adr)], data.qacc[slice(*qvel_adr)],
                    jnp.zeros(3), jnp.asarray(gravity), jnp.asarray(magnetic))
