"""Hopper: Gymnasium's planar one-legged hopper."""

from __future__ import annotations

import math

from crax.bodies.planar import PlanarBody


class Hopper(PlanarBody):
    """Hopper (docs/SPEC.md section 2): torso, thigh, leg, foot; 3 motors (gear 200).

    Observation 11 = qpos without root x (5: torso height, pitch, 3 joints) + qvel (6) clipped to
    ±10. The torso stands at 1.25 m and ``rootz`` has ``ref="1.25"``, so the ``rootz`` coordinate is
    the torso height (see :class:`PlanarBody`). Healthy while the torso height is at least 0.7
    (SPEC: > 0.7; the bound itself is a measure-zero case) and ``|pitch| < 0.2``. Control step
    0.008 s (0.002 × 4); reset noise ±0.005. Velocity suite: healthy bonus 1.0, control cost 0.001,
    base τ = 0.74 m/s.

    Only the foot collides (with the floor): while healthy the knee stays above the floor (the hip
    is at least 0.5 m up and the thigh is 0.45 m long) and the ankle is inside the foot capsule.

    Solver budget: 2 Newton iterations, 4 line-search steps. On contact states from random-action
    rollouts the MJX solve then differs from a converged one (50 iterations) by at most 0.1% of the
    largest joint acceleration (1 iteration: up to 11%).
    """

    name = "Hopper"
    asset = "hopper.xml"
    timestep = 0.002
    frame_skip = 4
    solver_iterations = 2  # see the class docstring
    ls_iterations = 4
    reset_noise = 0.005
    healthy_z = (0.7, math.inf)
    healthy_pitch = 0.2
    healthy_reward = 1.0
    ctrl_cost = 0.001
    feet = ("foot",)  # the site under the middle of the sole
    velocity_threshold = 0.74
