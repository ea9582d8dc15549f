"""Tasks by env id, resolved through the plugin registry's catalogues (:mod:`crax.suites.catalogue`):
``crax.make``, ``crax.env_ids``, ``crax.parse_id`` and ``crax.parameters``.

(The module is not called ``make``: ``crax.make`` is the function, and a module of that name would
hide these helpers behind it.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from crax.core.params import POSITIVE_COUNT, Choice, Param, Range, check
from crax.core.physics import PHYSICS
from crax.devices import startup
from crax.devices.settings import PHYSICS_HELP
from crax.plugins.manager import registry
from crax.suites import checks
from crax.suites.base import Suite
from crax.suites.catalogue import PAPER
from crax.suites.catalogue import supports as supports  # its home before the catalogues
from crax.suites.task_env import TaskEnv
from crax.tasks import compose

ENV_PARAMETERS = {
    "episode_length": Param(Suite.episode_length, POSITIVE_COUNT,
                            "steps before an episode is truncated (the task's own where it sets one)"),
    "physics": Param("jax", Choice(PHYSICS), PHYSICS_HELP),
    "solver_iterations": Param(None, POSITIVE_COUNT,
                               "the constraint solver's iterations per physics step (the body's own where not given)"),
    "ls_iterations": Param(None, POSITIVE_COUNT,
                           "the solver's line-search iterations per iteration (the body's own where not given)"),
}
"""Parameters of :class:`TaskEnv` (not of the suite) that ``crax.make`` accepts; defaults are TaskEnv's
(the episode length: the suite's :attr:`~crax.suites.base.Suite.episode_length`; the solver budget:
the body's :attr:`~crax.bodies.base.Body.solver_iterations` and ``ls_iterations``; :func:`parameters`)."""

COMPONENT_DOCS = {
    "constraints": "constraint terms added to the task, by registered name, with their parameters",
    "sensors": "sensors added to the observation (after the suite's own), by registered name, with their parameters",
}
"""What ``constraints`` and ``sensors`` (:mod:`crax.tasks.compose`) add, for :func:`parameters`."""


def env_ids() -> list[str]:
    """Every valid env id, from the registry's catalogues (:meth:`crax.plugins.manager.Registry.env_ids`):
    the paper's ``{Body}{Suite}{Level}`` of the registered bodies and suites, Safety-Gymnasium's
    (``SafetyPointGoal1-v0``, :mod:`crax.suites.safety_gym.catalogue`), then plugins' catalogues."""
    return registry().env_ids()


def crax_ids() -> list[str]:
    """The ids ``{Body}{Suite}{Level}`` of the registered bodies and suites (the paper's catalogue)."""
    return registry().env_ids(PAPER.name)


def parse_id(env_id: str) -> tuple[type, type[Suite], int]:
    """Splits an id into (body class, suite class, level), through the catalogue that lists it
    (:meth:`crax.plugins.manager.Registry.resolve`); raises ValueError naming valid choices.

    A Safety-Gymnasium id (``SafetyPointGoal1-v0``) gives the body and suite built to its
    definitions (:mod:`crax.suites.safety_gym.catalogue`)."""
    return registry().resolve(env_id)


def parameter_names(suite: type[Suite]) -> list[str]:
    """Names ``crax.make`` accepts as overrides for ``suite`` (and ``constraints``, ``sensors``)."""
    return [*suite.declared(), *ENV_PARAMETERS, *compose.KINDS]


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One keyword argument that ``crax.make`` accepts for an env id.

    Attributes:
      name: the keyword.
      default: its value when not given (a level-dependent default is the level's value).
      valid: its valid values (:class:`crax.core.params.Range` or ``Choice``); None where the
        suite or the named components check the value themselves (tuples of names, and
        ``constraints``/``sensors``: ``{registered name: {parameter: value}}``, see
        :mod:`crax.tasks.compose`).
      doc: what it is (from its :class:`~crax.core.params.Param` declaration; empty where a
        plugin suite declares only valid values).
    """

    name: str
    default: Any
    valid: Range | Choice | None
    doc: str = ""

    def describe(self) -> str:
        """The valid values in words, e.g. ``> 0`` or ``one of pseudo, natural``."""
        if self.name in compose.KINDS:
            return f"{{registered {self.name[:-1]} name: {{parameter: value}}}} (crax.names()[{self.name!r}])"
        return self.valid.describe() if self.valid is not None else "checked by the task"


def parameters(env_id: str) -> dict[str, Parameter]:
    """Every keyword argument ``crax.make(env_id, ...)`` accepts: name -> :class:`Parameter`
    (default, valid range and meaning), read from the suite's declaration
    (:meth:`crax.suites.base.Suite.declared`). ValueError for an invalid id, as :func:`parse_id`.

    ``crax.parameters("PointGoal1")["goal_radius"]`` has default 0.2 (the level's) and valid
    values ``Range(0.0, lo_open=True)`` ("> 0").
    """
    body, suite, level = parse_id(env_id)
    own = {"episode_length": suite.episode_length, "solver_iterations": body.solver_iterations,
           "ls_iterations": body.ls_iterations}
    declared = {**suite.declared(), **ENV_PARAMETERS,
                **{name: dataclasses.replace(ENV_PARAMETERS[name], default=value) for name, value in own.items()}}
    out = {name: Parameter(name, p.at(level), p.valid, p.doc) for name, p in declared.items()}
    out.update({name: Parameter(name, None, None, COMPONENT_DOCS[name]) for name in compose.KINDS})
    return out


def make(env_id: str, *, constraints: Mapping[str, Mapping[str, Any] | None] | None = None,
         sensors: Mapping[str, Mapping[str, Any] | None] | None = None, **overrides) -> TaskEnv:
    """Builds the env ``env_id`` (e.g. ``PointGoal1``); keyword arguments override suite parameters.

    ``constraints`` and ``sensors`` (``{registered name: {parameter: value}}``) add registered
    constraint terms and sensors, built-in or from any installed plugin, to the task
    (:mod:`crax.tasks.compose`): each added term is ``metrics["cost/<term>"]`` and part of the cost;
    added sensors extend the observation after the suite's own, in the order given.
    :func:`parameters` lists what an id accepts, with defaults and valid ranges.

    Raises:
      ValueError: unknown id, body, suite, level, parameter or component (the message lists valid
        choices), a parameter value outside its valid range (the message names both), or a
        component that does not fit the body, raised before the model is built; a component
        whose ``bind`` rejects the compiled model or that reads what the task lacks, after it.
        A plugin component that breaks its contract (docs/plugins.md) is a TypeError or
        ValueError naming the plugin, the class and the fix.
    """
    startup.configure_jax()  # compile cache and host devices (crax/devices/startup.py)
    body_cls, suite_cls, level = parse_id(env_id)
    valid = parameter_names(suite_cls)
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for {env_id}; valid parameters: {', '.join(valid)}")
    env_kwargs = {k: overrides.pop(k) for k in ENV_PARAMETERS if k in overrides}
    check(env_id, ENV_PARAMETERS, env_kwargs)
    suite_cls.check_params(level, overrides, where=env_id)
    added_constraints = compose.components("constraints", constraints, body_cls, env_id)
    added_sensors = compose.components("sensors", sensors, body_cls, env_id)
    suite = suite_cls(body_cls(), level, **overrides)
    checks.check_components(suite.constraints, suite.sensors)
    compose.check_terms(env_id, [c.term for c in suite.constraints], added_constraints)
    env = TaskEnv(suite, constraints=added_constraints, sensors=added_sensors, **env_kwargs)
    startup.announce_compile()
    return env


def names() -> dict[str, list[str]]:
    """Registered component names by kind (bodies, sensors, hazards, constraints, suites, learners)."""
    from crax.plugins.manager import KINDS

    reg = registry()
    return {kind: sorted(reg.table(kind)) for kind in KINDS}
