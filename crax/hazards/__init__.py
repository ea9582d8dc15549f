"""Placeable objects (hazards, goals) and constraint (cost) terms."""

from crax.hazards.base import Placeable
from crax.hazards.constraints import Constraint, HazardContact, HazardProximity, TaskParam, VelocityThreshold
from crax.hazards.pillars import CubePillars, CylinderPillars
from crax.hazards.placement import sample_layout
from crax.hazards.zones import CubeZones, CylinderZones, GoalZone

BUILTIN_HAZARDS = (CylinderZones, CubeZones, CylinderPillars, CubePillars, GoalZone)
BUILTIN_CONSTRAINTS = (HazardProximity, HazardContact, VelocityThreshold)

__all__ = [
    "BUILTIN_CONSTRAINTS", "BUILTIN_HAZARDS", "Constraint", "CubePillars", "CubeZones", "CylinderPillars",
    "CylinderZones", "GoalZone", "HazardContact", "HazardProximity", "Placeable", "TaskParam",
    "VelocityThreshold", "sample_layout",
]
