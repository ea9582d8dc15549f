"""The built-in plugin: registers crax's own components through the same hooks as third parties."""

from __future__ import annotations

from crax.plugins.hookspecs import hookimpl


@hookimpl
def crax_register_bodies():
    from crax.bodies import BUILTIN_BODIES

    return BUILTIN_BODIES


@hookimpl
def crax_register_sensors():
    from crax.sensors import BUILTIN_SENSORS

    return BUILTIN_SENSORS


@hookimpl
def crax_register_hazards():
    from crax.objects import BUILTIN_HAZARDS

    return BUILTIN_HAZARDS


@hookimpl
def crax_register_constraints():
    from crax.costs import BUILTIN_CONSTRAINTS

    return BUILTIN_CONSTRAINTS


@hookimpl
def crax_register_suites():
    from crax.suites import BUILTIN_SUITES

    return BUILTIN_SUITES


@hookimpl
def crax_register_learners():
    from crax.learners import BUILTIN_LEARNERS

    return BUILTIN_LEARNERS


@hookimpl
def crax_register_families():
    from crax.learners.families import FAMILIES

    return list(FAMILIES.items())


@hookimpl
def crax_register_catalogues():
    from crax.suites.catalogue import PAPER
    from crax.suites.safety_gym.catalogue import SAFETY_GYMNASIUM

    return [PAPER, SAFETY_GYMNASIUM]
