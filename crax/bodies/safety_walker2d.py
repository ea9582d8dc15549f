"""Safety-Gymnasium 1.0.0's Walker2d (``SafetyWalker2dVelocity-v1``: Gymnasium's Walker2d-v4)."""

from __future__ import annotations

import jax

from crax.bodies.safety_locomotion import SafetyGymLocomotion, open_range
from crax.core.mjx import mjx


class SafetyGymWalker2d(SafetyGymLocomotion):
    """Walker2d as Safety-Gymnasium's velocity task runs it: Gymnasium's ``walker2d.xml`` (6 motors, gear 100).

    RK4, 0.002 s × 4 = 0.008 s control step. Observation 17: qpos without root x (8), qvel (9)
    clipped to ±10. Reset: qpos0 + U(±0.005), qvel U(±0.005). Healthy while the height (rootz) is
    in (0.8, 2.0) and the pitch (rooty) in (−1, 1). Reward: x velocity + 1 − 0.001·‖a‖².
    Velocity-v1 threshold 2.3415 m/s on the x velocity.
    """

    name = "SafetyGymWalker2d"
    agent = "Walker2d"
    asset = "safety_walker2d.xml"
    timestep = 0.002
    frame_skip = 4
    reset_noise = 0.005
    qvel_clip = 10.0
    healthy_reward = 1.0
    ctrl_cost = 0.001
    velocity_threshold = 2.3415
    floor = {"friction": [0.7, 0.1, 0.1], "condim": 3, "solref": [0.02, 1.0], "solimp": [0.9, 0.95, 0.001, 0.5, 2.0],
             "margin": 0.0}

    def healthy(self, data: mjx.Data) -> jax.Array:
        q = self.qpos(data)
        return open_range(q[1], 0.8, 2.0) & open_range(q[2], -1.0, 1.0)
