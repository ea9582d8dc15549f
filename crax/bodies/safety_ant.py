"""Safety-Gymnasium 1.0.0's Ant (``SafetyAntVelocity-v1``: Gymnasium's Ant-v4)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.bodies.safety_locomotion import SafetyGymLocomotion
from crax.core.mjx import mjx


class SafetyGymAnt(SafetyGymLocomotion):
    """Ant as Safety-Gymnasium's velocity task runs it: Gymnasium's ``ant.xml`` (8 motors, gear 150).

    RK4, 0.01 s × 5 = 0.05 s control step. Observation 27 (Gymnasium v4's default,
    ``use_contact_forces=False``): qpos without root x, y (13), qvel (14). Reset: qpos0 + U(±0.1),
    qvel 0.1·N(0, 1). Healthy while the state is finite and the root's z is in [0.2, 1.0].
    Its velocity is the torso's (``xpos``, as ``get_body_com``); the cost reads the planar speed.
    Reward: x velocity + 1 (healthy) − 0.5·‖a‖². Velocity-v1 threshold 2.6222 m/s.
    """

    name = "SafetyGymAnt"
    agent = "Ant"
    asset = "safety_ant.xml"
    timestep = 0.01
    frame_skip = 5
    reset_noise = 0.1
    qvel_noise = "normal"
    obs_skip = 2
    speed_xy = True
    healthy_reward = 1.0
    ctrl_cost = 0.5
    velocity_threshold = 2.6222
    floor = {"friction": [1.0, 0.5, 0.5], "condim": 3, "solref": [0.02, 1.0], "solimp": [0.9, 0.95, 0.001, 0.5, 2.0],
             "margin": 0.01}

    def planar_point(self, data: mjx.Data) -> jax.Array:
        return self.position(data)[:2]

    def healthy(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        finite = jnp.all(jnp.isfinite(q)) & jnp.all(jnp.isfinite(v))
        return finite & (q[2] >= 0.2) & (q[2] <= 1.0)
