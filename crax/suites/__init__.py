"""Suites: task logic composed of a body, sensors, placeables and constraint terms."""

from crax.suites.base import Suite, Transition
from crax.suites.button import Button
from crax.suites.circle import Circle
from crax.suites.goal import Goal
from crax.suites.height import Height
from crax.suites.navigation import NavigationSuite
from crax.suites.pathway import Pathway
from crax.suites.push import Push
from crax.suites.reach import Reach
from crax.suites.spider_legs import SpiderLegs
from crax.suites.task_env import TaskEnv
from crax.suites.velocity import Velocity

BUILTIN_SUITES = (Goal, Velocity, Pathway, Circle, Reach, Button, Push, Height, SpiderLegs)

__all__ = ["BUILTIN_SUITES", "Button", "Circle", "Goal", "Height", "NavigationSuite", "Pathway", "Push", "Reach", "SpiderLegs", "Suite", "TaskEnv", "Transition", "Velocity"]
