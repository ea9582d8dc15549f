"""Safety-Gymnasium 1.0.0's HalfCheetah (``SafetyHalfCheetahVelocity-v1``: Gymnasium's HalfCheetah-v4)."""

from __future__ import annotations

import mujoco

from crax.bodies.safety_locomotion import SafetyGymLocomotion


class SafetyGymHalfCheetah(SafetyGymLocomotion):
    """HalfCheetah as Safety-Gymnasium's velocity task runs it: Gymnasium's ``half_cheetah.xml`` (6 motors).

    Euler (the model's own integrator), 0.01 s × 5 = 0.05 s control step. Observation 17: qpos
    without root x (8), qvel (9). Reset: qpos0 + U(±0.1), qvel 0.1·N(0, 1). Never terminates.
    Reward: x velocity − 0.1·‖a‖². Velocity-v1 threshold 3.2096 m/s on the x velocity.
    """

    name = "SafetyGymHalfCheetah"
    agent = "HalfCheetah"
    asset = "safety_half_cheetah.xml"
    integrator = int(mujoco.mjtIntegrator.mjINT_EULER)
    timestep = 0.01
    frame_skip = 5
    reset_noise = 0.1
    qvel_noise = "normal"
    ctrl_cost = 0.1
    velocity_threshold = 3.2096
    floor = {"friction": [0.4, 0.1, 0.1], "condim": 3, "solref": [0.02, 1.0], "solimp": [0.0, 0.8, 0.01, 0.5, 2.0],
             "margin": 0.0}
