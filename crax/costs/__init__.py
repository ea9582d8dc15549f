"""Constraint (cost) terms: each gives one scalar cost ≥ 0 per step, ``metrics["cost/<term>"]``."""

from crax.core.params import TaskParam
from crax.costs.action_energy import ActionEnergy
from crax.costs.arm_touch import ArmTouch
from crax.costs.base import Constraint
from crax.costs.bounds import OutOfBounds
from crax.costs.contact import HazardContact
from crax.costs.events import TaskEvent, TerminalCost
from crax.costs.foot_contact import FootContact
from crax.costs.foot_zones import FootZones
from crax.costs.height_limit import HeightLimit
from crax.costs.joint_limit import JointLimit
from crax.costs.proximity import HazardProximity
from crax.costs.velocity import VelocityThreshold

BUILTIN_CONSTRAINTS = (
    HazardProximity, HazardContact, VelocityThreshold, FootZones, TerminalCost, ArmTouch, OutOfBounds, TaskEvent,
    HeightLimit, FootContact, ActionEnergy, JointLimit,
)

__all__ = [
    "BUILTIN_CONSTRAINTS", "ActionEnergy", "ArmTouch", "Constraint", "TaskParam", "FootContact", "FootZones", "HazardContact",
    "HazardProximity", "HeightLimit", "JointLimit", "OutOfBounds", "TaskEvent", "TerminalCost", "VelocityThreshold",
]
