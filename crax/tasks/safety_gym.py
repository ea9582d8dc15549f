"""Safety-Gymnasium's own ids (``SafetyPointGoal1-v0``) and the crax tasks that serve them.

crax serves a Safety-Gymnasium task under its own id, suffix included: ``crax.make("SafetyPointGoal1-v0")``
builds Safety-Gymnasium 1.0.0's PointGoal1 (:mod:`crax.suites.safety_gym`), not the paper's
``PointGoal1``. The two id forms cannot clash: the paper's ids carry no ``Safety`` prefix and no
version. An id of Safety-Gymnasium's form that crax does not serve (another agent, Vision, Race,
Run, ...) is a ValueError that lists the ids served.
"""

from __future__ import annotations

import re

from crax.bodies.safety_point import SafetyGymPoint
from crax.suites.safety_gym import SafetyGoal
from crax.suites.safety_gym.base import VERSION, SafetyGymSuite

AGENTS: dict[str, type[SafetyGymPoint]] = {body.agent: body for body in (SafetyGymPoint,)}
"""Safety-Gymnasium's agent names and the bodies built to its definitions."""

TASKS: dict[str, type[SafetyGymSuite]] = {suite.task: suite for suite in (SafetyGoal,)}
"""Safety-Gymnasium's task names and the suites built to its definitions."""

_FORM = re.compile(r"Safety[A-Z]\w*-v\d+")


def served_ids() -> list[str]:
    """Every Safety-Gymnasium id crax serves, e.g. ``SafetyPointGoal0-v0``."""
    return [f"Safety{agent}{task}{level}-{VERSION}" for agent in AGENTS for task, suite in TASKS.items()
            for level in suite.levels]


def is_safety_gym_id(env_id: object) -> bool:
    """Whether ``env_id`` has Safety-Gymnasium's form ``Safety<...>-v<N>`` (served or not)."""
    return isinstance(env_id, str) and _FORM.fullmatch(env_id) is not None


def lookup(env_id: str) -> tuple[type[SafetyGymPoint], type[SafetyGymSuite], int]:
    """(body class, suite class, level) of a served id; ValueError listing the served ids otherwise."""
    for agent, body in AGENTS.items():
        for task, suite in TASKS.items():
            for level in suite.levels:
                if env_id == f"Safety{agent}{task}{level}-{VERSION}":
                    return body, suite, level
    raise ValueError(f"{env_id!r} is not a Safety-Gymnasium task crax serves; served: {', '.join(served_ids())} "
                     "(crax's own tasks have ids like PointGoal1: crax.env_ids())")
