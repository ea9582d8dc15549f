"""Walker2d: Gymnasium's planar biped."""

from __future__ import annotations

from crax.bodies.planar import PlanarBody


class Walker2d(PlanarBody):
    """Walker2d (docs/SPEC.md section 2): torso and two legs of thigh, leg, foot; 6 motors (gear 100).

    Observation 17 = qpos without root x (8: torso height, pitch, 6 joints) + qvel (9) clipped to
    ±10. The torso stands at 1.25 m and ``rootz`` has ``ref="1.25"``, so the ``rootz`` coordinate is
    the torso height (see :class:`PlanarBody`). Healthy while the torso height is in [0.8, 2.0] and
    ``|pitch| < 1.0``. Control step 0.008 s (0.002 × 4); reset noise ±0.005. Velocity suite:
    healthy bonus 1.0, control cost 0.001, base τ = 2.34 m/s.

    Only the two feet collide (with the floor): while healthy no other geom can reach the floor
    (the hip is at least 0.6 m up, the thigh is 0.45 m long and the ankle is inside the foot
    capsule).

    Solver budget: 3 Newton iterations, 6 line-search steps. On contact states from random-action
    rollouts the MJX solve then differs from a converged one (50 iterations) by at most 1.2% of the
    largest joint acceleration (2 iterations: up to 5.5%, 1 iteration: over 100%).
    """

    name = "Walker2d"
    asset = "walker2d.xml"
    timestep = 0.002
    frame_skip = 4
    solver_iterations = 3  # see the class docstring
    ls_iterations = 6
    reset_noise = 0.005
    healthy_z = (0.8, 2.0)
    healthy_pitch = 1.0
    healthy_reward = 1.0
    ctrl_cost = 0.001
    feet = ("foot", "foot_left")  # sites under the middle of each sole
    velocity_threshold = 2.34
