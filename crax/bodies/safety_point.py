"""Safety-Gymnasium 1.0.0's Point: the paper Point's morphology with Safety-Gymnasium's physics."""

from __future__ import annotations

import mujoco

from crax.bodies.point import Point
from crax.bodies.safety_gym import SafetyGymNavigation
from crax.core.scene import Category, collide_as


class SafetyGymPoint(SafetyGymNavigation, Point):
    """Point as Safety-Gymnasium 1.0.0 defines it (``assets/xmls/point.xml``), for its own tasks.

    Same joints, actuators and 12 sensor readings as :class:`~crax.bodies.point.Point` (whose
    observation it reuses), but Safety-Gymnasium's physics: a 0.002 s timestep and 10 substeps
    (0.02 s control step), MuJoCo's default solver (Newton; the MJX budget is
    :data:`~crax.bodies.base.SAFETY_GYM_SOLVER`'s, which steps its rollouts as 100/50 does), condim-6 contacts, no armature, and
    the sphere resting on the floor, so its floor contact (torsional and rolling friction
    included) acts on the motion as it does there. It starts at rest with no joint noise.

    Its kind is :data:`~crax.bodies.base.SAFETY_GYM` only: the paper's suites do not accept it,
    and the Safety-Gymnasium suites (:mod:`crax.suites.safety_gym`) accept only such bodies.
    """

    name = "SafetyGymPoint"
    agent = "Point"
    asset = "safety_point.xml"
    timestep = 0.002
    healthy_z = None
    floor_contact = True
    velocity_threshold = None

    def mjcf(self) -> mujoco.MjSpec:
        """Safety-Gymnasium's MJCF; the arrow box touches everything but the floor
        (``AGENT_FLOATING``): its height is fixed (the torso slides in x and y and turns about z),
        0.05 m clear of the floor, so that pair can never make a contact, and MJX would still compute
        its four box–plane contacts at every substep (4 of SafetyPointGoal1's 14 contact slots; what
        leaving them out saves: docs/safety_gymnasium/speed.md)."""
        spec = super().mjcf()
        collide_as(spec.geom("pointarrow"), Category.AGENT_FLOATING)
        return spec
