"""Safety-Gymnasium 1.0.0's Racecar (``SafetyRacecarGoal1-v0``; ``agents/racecar.py``, ``assets/xmls/racecar.xml``)."""

from __future__ import annotations

import importlib.resources

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import NAVIGATION
from crax.bodies.free import FreeBody
from crax.bodies.safety_gym import SafetyGymNavigation
from crax.bodies.safety_imu import site_imu
from crax.core.mjx import mjx

MESHES = ("chassis_differential.STL",)
"""The mesh files the asset reads (``crax/bodies/assets/meshes``): the chassis, its one mesh."""
WHEELS = ("left_front_wheel", "right_front_wheel", "left_rear_wheel", "right_rear_wheel", "diff_ring")
"""The Racecar's cylinders (its four wheels and the differential's ring): they touch the floor only
(:data:`Category.AGENT_WHEEL`)."""
PROXIES = ("left_front_proxy", "right_front_proxy", "left_rear_proxy", "right_rear_proxy")
"""Massless boxes around the wheels that take the wheels' contacts with objects."""


class SafetyGymRacecar(SafetyGymNavigation, FreeBody):
    """Racecar as Safety-Gymnasium 1.0.0 defines it (``assets/xmls/racecar.xml``), for its own tasks.

    A chassis mesh (17.6 g) with a front bumper box on a free joint, its root 0.05 m up; two front
    wheels (cylinders of radius 0.05, half-width 0.0225, 0.34 kg each) on steering hinges limited to
    ±0.785 rad and held equal by a joint equality, the left hinge driven by a position servo (kp 1,
    force ±1); two rear wheels fixed to one axle hinge (``diff_ring``) driven by a velocity servo
    (kv 1, force ±1); the differential's bodies with Safety-Gymnasium's inertias (2.4 kg in all).
    Actions: the axle's target speed in ±20 rad/s and the steering angle in ±0.785 rad (crax's
    [-1, 1] mapped onto those ranges; the Gymnasium face declares Safety-Gymnasium's box). Joint
    damping 0.001, condim 6 everywhere, MuJoCo's default friction and solver (Newton, 100
    iterations); RK4, 0.004 s × 10 substeps = 0.04 s control step; no reset noise
    (``Racecar.reset`` does nothing); never dies. It drives along its chassis' +x axis.

    **Changed for MJX**: MJX has no box–cylinder and no mesh–cylinder collision, so the five
    cylinders (the wheels and the differential's ring) touch the floor only
    (:data:`~crax.core.scene.Category.AGENT_WHEEL`; plane–cylinder is MuJoCo's algorithm), and a
    massless box of each wheel's extent (0.1 × 0.045 × 0.1 m) takes the wheel's contacts with
    objects: the front ones on the steering hinges (they turn with the wheel's heading, not its
    spin), the rear ones on the chassis. The ring sits inside the chassis' hull, which meets
    anything before the ring could. The chassis mesh collides as its convex hull, as in MuJoCo.
    crax's agent geoms never touch each other: at full steering lock Safety-Gymnasium's front
    wheel cylinders can touch the bumper box, a self-contact crax does not have
    (docs/safety_gymnasium/racecar.md measures both changes).

    Observation (12, Safety-Gymnasium's keys in its flattened order, :attr:`obs_keys`): the
    accelerometer, velocimeter, gyro and magnetometer of a site 0.02 m ahead of the root on its
    axes, computed from the state after the step's ``mjx.forward``; the tests compare them with
    MuJoCo's sensor stage. The Racecar has no joint sensors, so no joint readings.
    """

    name = "SafetyGymRacecar"
    agent = "Racecar"
    asset = "safety_racecar.xml"
    integrator = int(mujoco.mjtIntegrator.mjINT_RK4)
    timestep = 0.004
    solver_iterations = 100  # not SAFETY_GYM_SOLVER: a struck vase needs them (docs/safety_gymnasium/speed.md)
    ls_iterations = 50
    cylinders, proxies = WHEELS, PROXIES

    def mjcf_assets(self) -> dict[str, bytes]:
        """The chassis mesh, read from ``assets/meshes``."""
        meshes = importlib.resources.files("crax.bodies").joinpath("assets", "meshes")
        return {name: meshes.joinpath(name).read_bytes() for name in MESHES}

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.site_offset = tuple(float(p) for p in m.site(self.prefix + "torso").pos)

    def observe(self, data: mjx.Data) -> jax.Array:
        rot = data.xmat[self.torso_id]  # body -> world; the site has the body's axes
        return site_imu(rot, self.qvel(data), data.qacc[slice(*self.qvel_adr)], jnp.asarray(self.site_offset),
                        jnp.asarray(self.gravity), jnp.asarray(self.magnetic))


class Racecar(SafetyGymRacecar):
    """The Racecar in the paper's navigation suites (``RacecarPush1``; Goal, Button, Circle and Push at levels
    1-3, with the paper's semantics): Safety-Gymnasium's model, physics and observation
    (:class:`SafetyGymRacecar`), placed and costed as the paper's tasks place and cost every navigation body."""

    name = "Racecar"
    kinds = frozenset({NAVIGATION})
