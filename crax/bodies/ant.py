"""Ant: Gymnasium's four-legged walker on a free joint."""

from __future__ import annotations

from crax.bodies.base import LOCOMOTION, NAVIGATION
from crax.bodies.free import FreeBody


class Ant(FreeBody):
    """Ant (docs/SPEC.md section 2): 8 motors (gear 150), obs 27 = qpos without root x, y (13), qvel (14).

    Torso sphere (r 0.25) at z 0.75 with four legs on its diagonals; each leg a hip (axis z, ±30°)
    and an ankle (30° to 70°, Gymnasium's per-leg signs). Actuators follow the joints: hip_1,
    ankle_1, ..., hip_4, ankle_4 (legs front left, back left, back right, front right).
    Like Gymnasium's, an episode starts from the model's pose (legs horizontal, ankles at 0,
    below their 30° limit) plus noise, and the joint limits fold the legs down in the first
    steps; with zero action the ant then stands with its torso near z 0.6 and sags slowly
    (about 1 cm/s) towards z 0.36, the ankles' 30° limits, as its unpowered ankles give way.
    Only the torso and the four shins collide. Terminates when the torso leaves z in [0.2, 1.0];
    the colliding torso sphere (r 0.25) keeps it above the lower bound unless it sinks into the floor.

    Solver budget 4 iterations / 4 line-search steps: 1 iteration diverges under random actions;
    2 or 3 stay finite but leave about 1% of contact steps unconverged, which shows as spurious
    jumps (torso up to z 4-5 m against 3 m converged); 4 matches a 50-iteration solve.
    Velocity suite: healthy bonus 1.0, control cost 0.5, base τ = 2.62 m/s.
    """

    name = "Ant"
    kinds = frozenset({NAVIGATION, LOCOMOTION})
    asset = "ant.xml"
    timestep = 0.01
    frame_skip = 5
    solver_iterations = 4
    ls_iterations = 4
    reset_noise = 0.1
    healthy_z = (0.2, 1.0)
    healthy_reward = 1.0
    ctrl_cost = 0.5
    velocity_threshold = 2.62
    feet = ("front_left", "back_left", "back_right", "front_right")
    """Names of the shin geoms and of the sites at their tips (``agent/`` prefixed in the scene)."""
