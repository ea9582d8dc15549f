"""Safety-Gymnasium's own ids (``SafetyPointGoal1-v0``, ``SafetyAntVelocity-v1``) and the crax tasks that serve them.

crax serves a Safety-Gymnasium task under its own id, suffix included: ``crax.make("SafetyPointGoal1-v0")``
builds Safety-Gymnasium 1.0.0's PointGoal1 (:mod:`crax.suites.safety_gym`), not the paper's
``PointGoal1``. The two id forms cannot clash: the paper's ids carry no ``Safety`` prefix and no
version. An id of Safety-Gymnasium's form that crax does not serve (another agent, Vision,
...) is a ValueError that lists the ids served.
"""

from __future__ import annotations

import functools
import re

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
from crax.suites.safety_gym import (
    SafetyButton,
    SafetyCircle,
    SafetyFadingEasy,
    SafetyFadingHard,
    SafetyGoal,
    SafetyPush,
    SafetyRace,
    SafetyRun,
    SafetyVelocity,
    SafetyVelocityV0,
)

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
}
"""Each Safety-Gymnasium task crax serves and the agents it serves it on (bodies built to its definitions).
An agent name may stand for two bodies: Safety-Gymnasium's navigation tasks run its own Ant
(:class:`~crax.bodies.safety_navigation_ant.SafetyGymNavigationAnt`), its Velocity tasks Gymnasium's
(:class:`~crax.bodies.safety_ant.SafetyGymAnt`)."""

_FORM = re.compile(r"Safety[A-Z]\w*-v\d+")


@functools.cache
def _table() -> dict[str, tuple[type[Body], type[Suite], int]]:
    return {suite.served_id(body.agent, level): (body, suite, level)  # pyright: ignore[reportAttributeAccessIssue]
            for suite, bodies in SERVED.items() for body in bodies for level in suite.levels}


def served_ids() -> list[str]:
    """Every Safety-Gymnasium id crax serves, e.g. ``SafetyPointGoal0-v0``, ``SafetyAntVelocity-v1``."""
    return list(_table())


def is_safety_gym_id(env_id: object) -> bool:
    """Whether ``env_id`` has Safety-Gymnasium's form ``Safety<...>-v<N>`` (served or not)."""
    return isinstance(env_id, str) and _FORM.fullmatch(env_id) is not None


def lookup(env_id: str) -> tuple[type[Body], type[Suite], int]:
    """(body class, suite class, level) of a served id; ValueError listing the served ids otherwise."""
    found = _table().get(env_id)
    if found is None:
        raise ValueError(f"{env_id!r} is not a Safety-Gymnasium task crax serves; served: {', '.join(served_ids())} "
                         "(crax's own tasks have ids like PointGoal1: crax.env_ids())")
    return found
