"""Spider: the Ant with six legs, on a free joint."""

from __future__ import annotations

from crax.bodies.ant import Ant


class Spider(Ant):
    """Spider (docs/SPEC.md section 2): 12 motors (gear 150), obs 35 = qpos without root x, y (17), qvel (18).

    The Ant's torso and leg proportions with six legs at 60° spacing (front legs 30° off the
    heading); each leg a hip (axis z, ±30°) and an ankle (30° to 70°, positive bends down on every
    leg). Actuators: hip then ankle of front_left, mid_left, back_left, front_right, mid_right,
    back_right. The six foot spheres are the only colliding geoms; their geoms and sites carry the
    names in :attr:`feet`. Starts like the Ant from its model pose (ankles at 0, folded down by
    the limits in the first steps); with zero action it stands near z 0.6, sagging slowly.
    It keeps the rest of the Ant's declaration (:class:`~crax.bodies.ant.Ant`): physics (0.01 s × 5,
    solver budget 4 / 4: 2 iterations stay finite but throw the spider up to z 9 m on unconverged
    contacts), reset noise, health range and Velocity reward terms. Terminates when the torso
    leaves z in [0.2, 1.0]; the torso does not collide, so a flipped spider sinks through the floor
    and terminates. Velocity suite: healthy bonus 1.0, control cost 0.5; base τ = 0.741 m/s, half
    the 1.48 m/s that an unconstrained PPO policy reached on SpiderVelocity1 in 1.5e6 steps (SPEC;
    docs/DECISIONS.md, decision 13).
    """

    name = "Spider"
    asset = "spider.xml"
    velocity_threshold = 0.741
    feet = ("front_left", "front_right", "mid_left", "mid_right", "back_left", "back_right")
    """Names of the foot geoms and sites (``agent/`` prefixed in the scene)."""
