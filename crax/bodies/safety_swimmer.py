"""Safety-Gymnasium 1.0.0's Swimmer (``SafetySwimmerVelocity-v1``: Gymnasium's Swimmer-v4)."""

from __future__ import annotations

from crax.bodies.safety_locomotion import SafetyGymLocomotion


class SafetyGymSwimmer(SafetyGymLocomotion):
    """Swimmer as Safety-Gymnasium's velocity task runs it: Gymnasium's ``swimmer.xml``.

    Three capsules (radius 0.1, 1 m) in a plane, joined by two hinges (±100°, motors of gear 150),
    on root slides x, y and a hinge z, in a viscous medium (density 4000, viscosity 0.1: MuJoCo's
    inertia-box fluid forces). Nothing collides (the model's ``collision="predefined"`` with no
    pairs). RK4, 0.01 s × 4 = 0.04 s control step. Observation 8: qpos without root x, y (3),
    qvel (5). Reset: qpos0 + U(±0.1), qvel U(±0.1). Never terminates. Reward: x velocity
    − 1e-4·‖a‖². Velocity-v1 threshold 0.2282 m/s on the x velocity (v0: on the planar speed).
    """

    name = "SafetyGymSwimmer"
    agent = "Swimmer"
    asset = "safety_swimmer.xml"
    timestep = 0.01
    frame_skip = 4
    reset_noise = 0.1
    obs_skip = 2
    fluid = (4000.0, 0.1)
    collides = False
    floor_contact = False
    ctrl_cost = 1e-4
    velocity_threshold = 0.2282
