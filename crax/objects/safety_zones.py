"""Safety-Gymnasium's goal and hazards: crax's zones drawn as Safety-Gymnasium 1.0.0 draws them."""

from __future__ import annotations

import mujoco

from crax.core import palette
from crax.objects.zones import CylinderZones, GoalZone


class SafetyGymHazards(CylinderZones):
    """Safety-Gymnasium 1.0.0's hazards (``assets/geoms/hazards.py``): :class:`CylinderZones` of
    ``radius`` (their cost, placement and ray proxy), each drawn as Safety-Gymnasium's: a cylinder
    2 cm thick standing 1 cm above the floor (its centre 2 cm up), blue at alpha 0.25
    (:data:`~crax.core.palette.SAFETY_GYM`). The drawn cylinder collides with nothing, as
    Safety-Gymnasium's; only it is raised, inside its mocap body, which stays where the zones keep it.
    """

    name = "SafetyGymHazards"
    rgba = palette.SAFETY_GYM["hazard"]
    half_height = 0.01
    """Half the drawn cylinder's height (m)."""
    centre = 0.02
    """Height of the drawn cylinder's centre above the floor (m)."""

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, self.half_height, 0],
                "pos": [0.0, 0.0, self.centre - self.z]}


class SafetyGymGoal(GoalZone):
    """Safety-Gymnasium 1.0.0's goal (``assets/geoms/goal.py``): a :class:`GoalZone` of ``radius``
    drawn as Safety-Gymnasium's, a cylinder as tall as its radius standing 1 cm above the floor
    (its centre ``radius / 2 + 0.01`` up: 0.3 m tall for Goal's 0.3), green at ``alpha`` (0.25;
    Button's goal, which marks the goal button, 0.1). Visual only, as Safety-Gymnasium's; only the
    drawn cylinder is raised, inside its mocap body, which stays where the goal zone keeps it.

    Args:
      radius: the goal's radius (m).
      keepout: placement clearance radius (default: the radius).
      alpha: the goal's opacity.
    """

    name = "SafetyGymGoal"
    lift = 0.01
    """Gap between the floor and the drawn cylinder's bottom (m)."""

    def __init__(self, radius: float, *, keepout: float | None = None, alpha: float = 0.25):
        super().__init__(radius, keepout=keepout)
        self.rgba = (*palette.SAFETY_GYM["goal"][:3], float(alpha))

    def geom(self) -> dict:
        half = self.radius / 2
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, half, 0],
                "pos": [0.0, 0.0, half + self.lift - self.z]}
