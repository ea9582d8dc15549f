"""Safety-Gymnasium's own ids (``SafetyPointGoal1-v0``, ``SafetyAntVelocity-v1``) and the tasks that serve them.

crax serves a Safety-Gymnasium task under its own id, suffix included: ``crax.make("SafetyPointGoal1-v0")``
builds Safety-Gymnasium 1.0.0's PointGoal1 (this package's suites on its bodies built to Safety-Gymnasium's
definitions), not the paper's ``PointGoal1``. The two id forms cannot clash: the paper's ids carry
no ``Safety`` prefix and no version. An id of Safety-Gymnasium's form that crax does not serve
(another agent, ...) is a ValueError that lists the ids served. The Vision tasks
(``SafetyPointGoal1Vision-v0``) are the navigation tasks with the agent's camera (:mod:`crax.suites.safety_gym.vision`).

:data:`SAFETY_GYMNASIUM` is the catalogue crax's built-in plugin registers
(:mod:`crax.plugins.builtin`): ``crax.env_ids()``, ``crax.make`` and ``crax list`` read it through
the registry.
"""

from __future__ import annotations

from crax.bodies.base import Body
from crax.bodies.safety_ant import SafetyGymAnt
from crax.bodies.safety_car import SafetyGymCar
from crax.bodies.safety_doggo import SafetyGymDoggo
from crax.bodies.safety_half_cheetah import SafetyGymHalfCheetah
from crax.bodies.safety_hopper import SafetyGymHopper
from crax.bodies.safety_humanoid import SafetyGymHumanoid
from crax.bodies.safety_navigation_ant import SafetyGymNavigationAnt
from crax.bodies.safety_point import SafetyGymPoint
from crax.bodies.safety_racecar import SafetyGymRacecar
from crax.bodies.safety_swimmer import SafetyGymSwimmer
from crax.bodies.safety_walker2d import SafetyGymWalker2d
from crax.suites.base import Suite
from crax.suites.catalogue import TableCatalogue, Task
from crax.suites.safety_gym.button import SafetyButton
from crax.suites.safety_gym.circle import SafetyCircle
from crax.suites.safety_gym.fading import SafetyFadingEasy, SafetyFadingHard
from crax.suites.safety_gym.goal import SafetyGoal
from crax.suites.safety_gym.push import SafetyPush
from crax.suites.safety_gym.race import SafetyRace
from crax.suites.safety_gym.run import SafetyRun
from crax.suites.safety_gym.velocity import SafetyVelocity, SafetyVelocityV0
from crax.suites.safety_gym.vision import VISION_SUITES

NAVIGATION_AGENTS: tuple[type[Body], ...] = (SafetyGymPoint, SafetyGymNavigationAnt, SafetyGymCar, SafetyGymDoggo,
                                             SafetyGymRacecar)
"""The agents crax serves Safety-Gymnasium's navigation tasks on."""

VELOCITY_AGENTS: tuple[type[Body], ...] = (SafetyGymAnt, SafetyGymHalfCheetah, SafetyGymHopper, SafetyGymHumanoid,
                                           SafetyGymSwimmer, SafetyGymWalker2d)
"""The agents crax serves Safety-Gymnasium's Velocity tasks on (Gymnasium's MuJoCo v4 models)."""

SERVED: dict[type[Suite], tuple[type[Body], ...]] = {
    SafetyGoal: NAVIGATION_AGENTS,
    SafetyCircle: NAVIGATION_AGENTS,
    SafetyVelocity: VELOCITY_AGENTS,
    SafetyVelocityV0: VELOCITY_AGENTS,
    SafetyPush: NAVIGATION_AGENTS,
    SafetyButton: NAVIGATION_AGENTS,
    SafetyRun: NAVIGATION_AGENTS,
    SafetyFadingEasy: NAVIGATION_AGENTS,
    SafetyFadingHard: NAVIGATION_AGENTS,
    SafetyRace: NAVIGATION_AGENTS,
    **{suite: NAVIGATION_AGENTS for suite in VISION_SUITES},
}
"""Each Safety-Gymnasium task crax serves and the agents it serves it on (bodies built to its definitions).
An agent name may stand for two bodies: Safety-Gymnasium's navigation tasks run its own Ant
(:class:`~crax.bodies.safety_navigation_ant.SafetyGymNavigationAnt`), its Velocity tasks Gymnasium's
(:class:`~crax.bodies.safety_ant.SafetyGymAnt`)."""

FORM = r"Safety[A-Z]\w*-v\d+"
"""Safety-Gymnasium's id form ``Safety<...>-v<N>``, served or not."""


def _table() -> dict[str, Task]:
    return {suite.served_id(body.agent, level): (body, suite, level)  # pyright: ignore[reportAttributeAccessIssue]
            for suite, bodies in SERVED.items() for body in bodies for level in suite.levels}


SAFETY_GYMNASIUM = TableCatalogue(
    "safety-gymnasium", "Safety-Gymnasium's own tasks (docs/safety_gymnasium.md)", FORM, _table,
    what="a Safety-Gymnasium task crax serves", listed="served",
    hint=" (crax's own tasks have ids like PointGoal1: crax.env_ids())")
"""Safety-Gymnasium's ids crax serves, e.g. ``SafetyPointGoal0-v0``, ``SafetyAntVelocity-v1``."""
