"""Suites: task logic composed of a body, sensors, placeables and constraint terms."""

from crax.suites.base import Suite, TaskEnv, Transition
from crax.suites.goal import Goal
from crax.suites.navigation import NavigationSuite
from crax.suites.velocity import Velocity

BUILTIN_SUITES = (Goal, Velocity)

__all__ = ["BUILTIN_SUITES", "Goal", "NavigationSuite", "Suite", "TaskEnv", "Transition", "Velocity"]
