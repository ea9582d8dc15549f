"""Safety-Gymnasium 1.0.0's Hopper (``SafetyHopperVelocity-v1``: Gymnasium's Hopper-v4)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.bodies.safety_locomotion import SafetyGymLocomotion, open_range
from crax.core.mjx import mjx


class SafetyGymHopper(SafetyGymLocomotion):
    """Hopper as Safety-Gymnasium's velocity task runs it: Gymnasium's ``hopper.xml`` (3 motors, gear 200).

    RK4, 0.002 s × 4 = 0.008 s control step; its geoms collide with each other (parent and child
    excepted) as well as with the floor. Observation 11: qpos without root x (5), qvel (6) clipped
    to ±10. Reset: qpos0 + U(±0.005), qvel U(±0.005). Healthy while every qpos entry after the
    first two and every qvel entry is in (−100, 100), the height (rootz) is above 0.7 and the
    pitch (rooty) in (−0.2, 0.2). Reward: x velocity + 1 − 0.001·‖a‖². Velocity-v1 threshold
    0.7402 m/s on the x velocity.
    """

    name = "SafetyGymHopper"
    agent = "Hopper"
    asset = "safety_hopper.xml"
    timestep = 0.002
    frame_skip = 4
    reset_noise = 0.005
    qvel_clip = 10.0
    self_collision = True
    healthy_reward = 1.0
    ctrl_cost = 0.001
    velocity_threshold = 0.7402
    floor = {"friction": [1.0, 0.005, 0.0001], "condim": 3, "solref": [0.02, 1.0], "solimp": [0.8, 0.8, 0.01, 0.5, 2.0],
             "margin": 0.001}

    def healthy(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        state = jnp.all(open_range(q[2:], -100.0, 100.0)) & jnp.all(open_range(v, -100.0, 100.0))
        return state & open_range(q[1], lo=0.7) & open_range(q[2], -0.2, 0.2)
