"""Safety-Gymnasium 1.0.0's Car (``SafetyCarGoal1-v0``; ``agents/car.py``, ``assets/xmls/car.xml``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import NAVIGATION
from crax.bodies.free import FreeBody
from crax.bodies.safety_gym import SafetyGymNavigation
from crax.bodies.safety_imu import IMU_KEYS, origin_imu
from crax.core.mjx import mjx

WHEELS = ("left", "right")
"""The Car's driven wheels: cylinders that touch the floor only (:data:`Category.AGENT_WHEEL`)."""
PROXIES = ("left_proxy", "right_proxy")
"""Massless boxes on the chassis around the wheels that take the wheels' contacts with objects."""


def quat_to_mat(q: jax.Array) -> jax.Array:
    """Row-major 3×3 rotation matrix of a (w, x, y, z) quaternion, normalised first (MuJoCo's
    ``ballquat`` sensor reads the normalised quaternion; ``mju_quat2Mat``)."""
    w, x, y, z = q / jnp.linalg.norm(q)
    return jnp.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ])


class SafetyGymCar(SafetyGymNavigation, FreeBody):
    """Car as Safety-Gymnasium 1.0.0 defines it (``assets/xmls/car.xml``), for its own tasks.

    A box chassis (0.2 × 0.2 × 0.1 m with bumpers, density 5: 23.9 g) on a free joint, its centre
    0.1 m up; two cylinder wheels (radius 0.05, width 0.05) on hinges at the back, each driven by a
    motor of gear 1 and force ±0.02 (controls in [-1, 1]: the two actions); a free-rolling ball
    (radius 0.05) on a ball joint at the front. Joint damping 0.001, condim 6 everywhere, MuJoCo's
    default friction and solver (Newton; budget :data:`~crax.bodies.base.SAFETY_GYM_SOLVER`); 0.004 s × 10 substeps = 0.04 s control
    step; no reset noise (``Car.reset`` does nothing); never dies.

    **Changed for MJX**: MJX has no box–cylinder collision, so the wheel cylinders touch the floor
    only (:data:`~crax.core.scene.Category.AGENT_WHEEL`; plane–cylinder is MuJoCo's algorithm), and a
    massless box of the wheel's extent (0.05 × 0.1 × 0.1 m) fixed to the chassis around each wheel
    takes its contacts with objects (vases, the push box, gremlins, pillars). The dynamics on the
    floor are Safety-Gymnasium's; a wheel meets an object through its bounding box, whose corners
    stand up to 2.1 cm outside the wheel's rim (docs/safety_gymnasium/car.md).

    Observation (24, Safety-Gymnasium's keys in its flattened order, :attr:`obs_keys`): the
    chassis site's accelerometer, velocimeter, gyro and magnetometer (3 each), the rear ball's
    angular velocity (``ballangvel_rear``, its own frame) and its orientation as a row-major 3×3
    matrix (``ballquat_rear``), computed from the state after the step's ``mjx.forward``; the tests
    compare them with MuJoCo's sensor stage.
    """

    name = "SafetyGymCar"
    agent = "Car"
    asset = "safety_car.xml"
    timestep = 0.004
    cylinders, proxies = WHEELS, PROXIES
    obs_keys = (*IMU_KEYS, ("ballangvel_rear", 3), ("ballquat_rear", 9))

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        rear = m.joint(self.prefix + "rear")
        self.rear_qpos = int(rear.qposadr[0]) - self.qpos_adr[0]
        self.rear_qvel = int(rear.dofadr[0]) - self.qvel_adr[0]

    def observe(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        imu = origin_imu(data, self.torso_id, self.qvel_adr, self.gravity, self.magnetic)
        rear_spin = v[self.rear_qvel: self.rear_qvel + 3]
        rear_mat = quat_to_mat(q[self.rear_qpos: self.rear_qpos + 4])
        return jnp.concatenate([imu, rear_spin, rear_mat])


class Car(SafetyGymCar):
    """The Car in the paper's navigation suites (``CarGoal1``; Goal, Button, Circle and Push at levels
    1-3, with the paper's semantics): Safety-Gymnasium's model, physics and observation
    (:class:`SafetyGymCar`), placed and costed as the paper's tasks place and cost every navigation body."""

    name = "Car"
    kinds = frozenset({NAVIGATION})
