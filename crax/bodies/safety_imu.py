"""The torso's inertial readings of Safety-Gymnasium's Car and Doggo, whose sensor site is the torso's origin."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.mjx import mjx


def origin_imu(data: mjx.Data, torso_id: int, qvel_adr: tuple[int, int], gravity: tuple[float, ...],
               magnetic: tuple[float, ...]) -> jax.Array:
    """Accelerometer, velocimeter, gyro and magnetometer (3 each, MuJoCo's sensors) of a site at the
    origin of a free-jointed torso, on its axes; ``qvel_adr`` the free joint's first dof and the body's
    end, ``gravity`` and ``magnetic`` the model's options."""
    v = data.qvel[slice(*qvel_adr)]
    acc = data.qacc[slice(*qvel_adr)]
    rot = data.xmat[torso_id]  # body -> world
    # a free joint's translational qvel and qacc are the origin's world velocity and acceleration,
    # its rotational qvel the angular velocity in the body frame
    accelerometer = rot.T @ (acc[0:3] - jnp.asarray(gravity))
    velocimeter = rot.T @ v[0:3]
    magnetometer = rot.T @ jnp.asarray(magnetic)
    return jnp.concatenate([accelerometer, velocimeter, v[3:6], magnetometer])
