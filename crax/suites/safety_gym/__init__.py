"""Safety-Gymnasium 1.0.0's own tasks, as it defines them (``SafetyPointGoal1-v0``, ``SafetyAntVelocity-v1``, ...).

They sit beside the paper's suites and share none of their defaults: Safety-Gymnasium's Point
(:class:`crax.bodies.safety_point.SafetyGymPoint`) and Ant
(:class:`crax.bodies.safety_navigation_ant.SafetyGymNavigationAnt`), timing, objects (vases included), layout
extents and keepouts, pseudo-lidars, reward and indicator cost. Safety-Gymnasium's slice of crax is
this package: its suites, and :mod:`~crax.suites.safety_gym.catalogue`, the catalogue of its ids
on the bodies built to its definitions (``crax.bodies.safety_*``), which the built-in plugin registers.
docs/safety_gymnasium.md says how they were checked.
"""

from crax.suites.safety_gym.base import SAFETY_GYM_PARAMS, SafetyGymSuite
from crax.suites.safety_gym.button import SafetyButton
from crax.suites.safety_gym.catalogue import SAFETY_GYMNASIUM
from crax.suites.safety_gym.circle import SafetyCircle
from crax.suites.safety_gym.fading import SafetyFadingEasy, SafetyFadingHard
from crax.suites.safety_gym.goal import SafetyGoal
from crax.suites.safety_gym.push import SafetyPush
from crax.suites.safety_gym.race import SafetyRace
from crax.suites.safety_gym.run import SafetyRun
from crax.suites.safety_gym.velocity import SafetyVelocity, SafetyVelocityV0

SAFETY_GYM_SUITES = (SafetyGoal, SafetyVelocity, SafetyVelocityV0, SafetyCircle, SafetyPush, SafetyButton, SafetyRun,
                     SafetyFadingEasy, SafetyFadingHard, SafetyRace)

__all__ = ["SAFETY_GYMNASIUM", "SAFETY_GYM_PARAMS", "SAFETY_GYM_SUITES", "SafetyButton", "SafetyCircle", "SafetyFadingEasy",
           "SafetyFadingHard", "SafetyGoal", "SafetyGymSuite", "SafetyPush", "SafetyRace", "SafetyRun", "SafetyVelocity",
           "SafetyVelocityV0"]
