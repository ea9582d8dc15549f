"""Safety-Gymnasium 1.0.0's Doggo (``SafetyDoggoGoal1-v0``; ``agents/doggo.py``, ``assets/xmls/doggo.xml``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import NAVIGATION
from crax.bodies.free import FreeBody
from crax.bodies.safety_gym import SafetyGymNavigation
from crax.bodies.safety_imu import IMU_KEYS, origin_imu
from crax.bodies.touch import TouchSites
from crax.core.mjx import mjx

HINGES = ("hip_1_z", "hip_2_z", "hip_3_z", "hip_4_z", "hip_1_y", "hip_2_y", "hip_3_y", "hip_4_y",
          "ankle_1", "ankle_2", "ankle_3", "ankle_4")
"""The Doggo's actuated hinges in actuator (and observation) order; the passive waist is not observed."""
TOUCH_SITES = ("ankle_1a", "ankle_2a", "ankle_3a", "ankle_4a", "ankle_1b", "ankle_2b", "ankle_3b", "ankle_4b")
"""The touch sensors' sites in Safety-Gymnasium's observation order: knees (``a``), then feet (``b``)."""
TORSO = ("agent", "agent2")
"""The torso's two cylinders: they touch the floor only (:data:`Category.AGENT_WHEEL`)."""
PROXIES = ("torso_proxy", "rear_proxy")
"""Massless capsules along the torso's cylinders that take the torso's contacts with objects."""


class SafetyGymDoggo(SafetyGymNavigation, FreeBody):
    """Doggo as Safety-Gymnasium 1.0.0 defines it (``assets/xmls/doggo.xml``), for its own tasks.

    A quadruped of 19.8 g: a torso of two coaxial cylinders (radius 0.0375 m, 0.1 m each, density 2)
    joined by a passive waist hinge about their axis (±0.52 rad), on a free joint 0.22 m up; four legs
    of capsules (radius 0.016, density 20), each a hip of two hinges (azimuth about z, elevation about
    y) and a knee (``ankle``). Joint stiffness 1e-4 towards each joint's ``springref``, armature 5e-5,
    no damping; 12 motors of gear 0.00625, controls in [-1, 1] (the twelve actions, in :data:`HINGES`
    order). Physics: Euler, 0.01 s × 10 substeps = 0.1 s control step, condim 6 everywhere,
    MuJoCo's default friction and solver (Newton; budget :data:`~crax.bodies.base.SAFETY_GYM_SOLVER`). Reset (``Doggo.reset`` does
    nothing): at rest, level, every hinge at 0, turned by the layout's yaw, so it drops about
    14 cm onto its front feet and its rear knees and feet. It never dies (``Doggo.is_alive``).

    **Changed for MJX**: MJX has no box–cylinder collision, so the torso's cylinders touch the floor
    only (:data:`~crax.core.scene.Category.AGENT_WHEEL`; plane–cylinder is MuJoCo's algorithm), and a
    massless capsule along each half (radius 0.0375, reaching the cylinder's end; the two overlap at
    the waist) takes its contacts with objects (vases, the push box, gremlins, pillars, buttons). A
    capsule is the cylinder along its side; at an end face it is a hemisphere, which leaves out the
    rim by up to 1.55 cm. The Doggo's own geoms do not collide with each other in crax, where
    Safety-Gymnasium lets geoms of bodies that are not parent and child collide: over the joints'
    ranges only the rear shins (``ankle_2``, ``ankle_3``) can meet (the tests check), and that pair
    is an explicit contact pair of the asset, as in Safety-Gymnasium.

    Observation (56, Safety-Gymnasium's keys in its flattened order, :attr:`obs_keys`): the torso
    site's accelerometer, velocimeter, gyro and magnetometer (3 each; the site is the torso's
    origin), the 8 touch sensors (:data:`TOUCH_SITES`: the normal force of the contacts at each knee
    and foot, :class:`~crax.bodies.touch.TouchSites`), the 12 hinge velocities and (sin, cos) of the 12
    hinge angles (:data:`HINGES`), computed from the state after the step's ``mjx.forward``; the
    tests compare them with MuJoCo's sensor stage. It reads MJX's contact list, so it runs on
    ``physics="jax"`` only.
    """

    name = "SafetyGymDoggo"
    agent = "Doggo"
    asset = "safety_doggo.xml"
    timestep = 0.01
    cylinders, proxies = TORSO, PROXIES
    obs_keys = (*IMU_KEYS, *((f"touch_{s}", 1) for s in TOUCH_SITES), *((f"jointvel_{h}", 1) for h in HINGES),
                *((f"jointpos_{h}", 2) for h in HINGES))

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        joints = [m.joint(self.prefix + h) for h in HINGES]
        self.hinge_qpos = tuple(int(j.qposadr[0]) for j in joints)
        self.hinge_qvel = tuple(int(j.dofadr[0]) for j in joints)
        self.touch = TouchSites.of(m, tuple(self.prefix + s for s in TOUCH_SITES))

    def observe(self, data: mjx.Data) -> jax.Array:
        imu = origin_imu(data, self.torso_id, self.qvel_adr, self.gravity, self.magnetic)
        angles = data.qpos[jnp.asarray(self.hinge_qpos)]
        sin_cos = jnp.stack([jnp.sin(angles), jnp.cos(angles)], axis=-1).reshape(-1)
        return jnp.concatenate([imu, self.touch.read(data), data.qvel[jnp.asarray(self.hinge_qvel)], sin_cos])


class Doggo(SafetyGymDoggo):
    """The Doggo in the paper's navigation suites (``DoggoButton2``; Goal, Button, Circle and Push at levels
    1-3, with the paper's semantics): Safety-Gymnasium's model, physics and observation
    (:class:`SafetyGymDoggo`), placed and costed as the paper's tasks place and cost every navigation body."""

    name = "Doggo"
    kinds = frozenset({NAVIGATION})
