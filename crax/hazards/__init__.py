"""Placeable objects (hazards, goals) and constraint (cost) terms."""

from crax.hazards.action_energy import ActionEnergy
from crax.hazards.arm_touch import ArmTouch
from crax.hazards.base import Placeable
from crax.hazards.block import Block
from crax.hazards.buttons import Buttons, Gremlins
from crax.hazards.constraints import (
    Constraint,
    HazardContact,
    HazardProximity,
    OutOfBounds,
    TaskEvent,
    TaskParam,
    VelocityThreshold,
)
from crax.hazards.foot_contact import FootContact
from crax.hazards.height_limit import HeightLimit
from crax.hazards.joint_limit import JointLimit
from crax.hazards.mixed_zones import MixedZones
from crax.hazards.pathway import FootZones, PathwayZones, TerminalCost
from crax.hazards.pillars import CubePillars, CylinderPillars
from crax.hazards.placement import sample_layout
from crax.hazards.walls import wall_points
from crax.hazards.zones import CubeZones, CylinderZones, GoalZone

BUILTIN_HAZARDS = (
    CylinderZones, CubeZones, CylinderPillars, CubePillars, GoalZone, PathwayZones, MixedZones, Buttons, Gremlins,
    Block,
)
BUILTIN_CONSTRAINTS = (
    HazardProximity, HazardContact, VelocityThreshold, FootZones, TerminalCost, ArmTouch, OutOfBounds, TaskEvent,
    HeightLimit, FootContact, ActionEnergy, JointLimit,
)

__all__ = [
    "ActionEnergy", "ArmTouch", "BUILTIN_CONSTRAINTS", "BUILTIN_HAZARDS", "Block", "Buttons", "Constraint", "CubePillars",
    "CubeZones", "CylinderPillars", "CylinderZones", "FootContact", "FootZones", "GoalZone", "Gremlins", "HazardContact",
    "HazardProximity", "HeightLimit", "JointLimit", "MixedZones", "OutOfBounds", "PathwayZones", "Placeable", "TaskEvent", "TaskParam",
    "TerminalCost", "VelocityThreshold", "sample_layout", "wall_points",
]
