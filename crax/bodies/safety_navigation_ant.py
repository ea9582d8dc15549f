"""Safety-Gymnasium 1.0.0's Ant of its navigation tasks (``SafetyAntGoal1-v0``; ``agents/ant.py``)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.free import FreeBody
from crax.bodies.safety_gym import SafetyGymNavigation
from crax.bodies.safety_imu import IMU_KEYS, site_imu
from crax.core.mjx import mjx

HINGES = ("hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4")
"""The Ant's hinges in joint (and actuator) order."""


class SafetyGymNavigationAnt(SafetyGymNavigation, FreeBody):
    """Ant as Safety-Gymnasium 1.0.0 defines it for its navigation tasks (``assets/xmls/ant.xml``).

    Not Gymnasium's Ant of the Velocity tasks (:class:`crax.bodies.safety_ant.SafetyGymAnt`): a
    small quadruped (torso sphere of radius 0.0625 m, capsule legs of radius 0.02, density 5:
    10.6 g in all) on a free joint, its root 0.18 m up; each leg a hip (±0.7 rad about z) and an
    ankle (0.52 to 1.74 rad, signed per leg), armature 1 and damping 1; 8 motors of gear 150,
    controls in [-1, 1]. Physics: RK4, 0.01 s × 10 substeps = 0.1 s control step, condim 6,
    MuJoCo's default solver (Newton; budget :data:`~crax.bodies.base.SAFETY_GYM_SOLVER`). Its geoms touch the floor and the objects,
    not each other: within the joint ranges no two of its non-adjacent geoms come nearer than 3 cm
    (the tests check), so Safety-Gymnasium's self-collision pairs never make contact.

    Reset (``Ant.reset``): at rest, the root at height 0.18 with the layout's yaw; hips
    U(±0.1) rad, ankles ±(π/2 + U(±0.1)) (negative on legs 2 and 3), so it drops onto its feet.
    Alive while the torso is more than 0.08 m above the floor (``Ant.is_alive``): the episode ends
    when it is not (:meth:`healthy`).

    Observation (40, Safety-Gymnasium's keys in its flattened order, :attr:`obs_keys`): the torso
    site's accelerometer, velocimeter, gyro and magnetometer (3 each), the 8 hinge velocities,
    the site's height (``agent_pos``: framepos without x, y), its world angular velocity
    (``agent_qvel``: frameangvel), and (sin, cos) of each hinge angle. They are computed from the
    state after the step's ``mjx.forward`` (the site sits 0.02 m below the root on the torso's
    axes), as MuJoCo's sensors read them; the tests compare them with MuJoCo's sensor stage.
    """

    name = "SafetyGymNavigationAnt"
    agent = "Ant"
    asset = "safety_navigation_ant.xml"
    integrator = int(mujoco.mjtIntegrator.mjINT_RK4)
    timestep = 0.01
    reset_noise = 0.1
    alive_height = 0.08
    """The torso's height (m) at or below which the Ant is dead (``Ant.is_alive``)."""
    healthy_z = (alive_height, math.inf)
    obs_keys = (*IMU_KEYS, *((f"{h}_vel", 1) for h in HINGES), ("agent_pos", 1), ("agent_qvel", 3),
                *((h, 2) for h in HINGES))
    reset_pose = (0.0, math.pi / 2, 0.0, -math.pi / 2, 0.0, -math.pi / 2, 0.0, math.pi / 2)
    """The hinge angles a reset draws about (``Ant.reset``: hips 0, ankles ±π/2)."""

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.site_offset = tuple(float(p) for p in m.site(self.prefix + "torso").pos)

    def initial_state(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        nv = self.qvel_adr[1] - self.qvel_adr[0]
        noise = jax.random.uniform(key, (len(self.reset_pose),), minval=-self.reset_noise, maxval=self.reset_noise)
        qpos = jnp.asarray(self.qpos0, jnp.float32).at[7:].set(jnp.asarray(self.reset_pose, jnp.float32) + noise)
        return qpos, jnp.zeros(nv, jnp.float32)

    def healthy(self, data: mjx.Data) -> jax.Array:
        """Whether the torso is more than 0.08 m up (strictly, as ``Ant.is_alive``)."""
        return self.position(data)[2] > self.alive_height

    def observe(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        rot = data.xmat[self.torso_id]  # body -> world; the site has the body's axes
        offset = jnp.asarray(self.site_offset)
        imu = site_imu(rot, v, data.qacc[slice(*self.qvel_adr)], offset, jnp.asarray(self.gravity),
                       jnp.asarray(self.magnetic))
        height = (data.xpos[self.torso_id] + rot @ offset)[2:3]
        angles = q[7:]
        sin_cos = jnp.stack([jnp.sin(angles), jnp.cos(angles)], axis=-1).reshape(-1)
        return jnp.concatenate([imu, v[6:], height, rot @ v[3:6], sin_cos])
