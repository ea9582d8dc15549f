"""Multi-agent tasks by name: ``crax.tasks.multi_agent.make_ma(scenario, agent_conf)`` as Safety-Gymnasium's
``make_ma`` takes them, and ids ``SafetyMA{Scenario}{agent_conf}Velocity-v0`` (``make_ma_id``) for the
command line (Safety-Gymnasium registers no multi-agent id)."""

from __future__ import annotations

from typing import Any

from crax.core.params import check
from crax.core.partition import PartitionedEnv
from crax.suites.safety_gym.multi_velocity import SCENARIOS, SafetyMultiVelocity
from crax.suites.task_env import TaskEnv
from crax.tasks.catalog import ENV_PARAMETERS, parse_id


def ma_ids() -> dict[str, tuple[str, str]]:
    """Every multi-agent id crax serves, with its (scenario, agent_conf); ``|`` is spelt ``-`` in an id
    (``SafetyMAHumanoid9-8Velocity-v0``)."""
    return {f"SafetyMA{scenario}{conf.replace('|', '-')}Velocity-v0": (scenario, conf)
            for scenario, s in SCENARIOS.items() for conf in s.parts}


def make_ma(scenario: str, agent_conf: str, agent_obsk: int = 1, **overrides: Any) -> PartitionedEnv:
    """Safety-Gymnasium's Safe MaMuJoCo velocity task ``scenario`` split as ``agent_conf`` (e.g.
    ``make_ma("HalfCheetah", "2x3")``), each agent observing its joints and those ``agent_obsk`` edges away
    (:mod:`crax.core.partition`); keyword arguments: ``velocity_threshold`` (default: the partition's τ) and
    the env's parameters (``episode_length``, ``physics``, …, as ``crax.make`` takes them).

    Raises:
      ValueError: an unknown scenario or partition (the message lists those served), a bad parameter.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown multi-agent scenario {scenario!r}; valid choices: {', '.join(SCENARIOS)}")
    parts = SCENARIOS[scenario].parts
    if agent_conf not in parts:
        raise ValueError(f"unknown agent_conf {agent_conf!r} for {scenario}; valid choices: {', '.join(parts)}")
    where = f"make_ma({scenario!r}, {agent_conf!r})"
    env_kwargs = {k: overrides.pop(k) for k in ENV_PARAMETERS if k in overrides}
    check(where, ENV_PARAMETERS, env_kwargs)
    unknown = sorted(set(overrides) - set(SafetyMultiVelocity.params))
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for {where}; valid parameters: "
                         f"{', '.join([*SafetyMultiVelocity.params, *ENV_PARAMETERS])}")
    overrides.setdefault("velocity_threshold", SCENARIOS[scenario].thresholds[agent_conf])
    SafetyMultiVelocity.check_params(0, overrides, where=where)
    body_cls = parse_id(f"Safety{scenario}Velocity-v1")[0]
    env = TaskEnv(SafetyMultiVelocity(body_cls(), 0, **overrides), **env_kwargs)
    return PartitionedEnv(env, SCENARIOS[scenario].partition(agent_conf), obsk=agent_obsk)


def make_ma_id(env_id: str, agent_obsk: int = 1, **overrides: Any) -> PartitionedEnv:
    """:func:`make_ma` by id (:func:`ma_ids`), e.g. ``SafetyMAHalfCheetah2x3Velocity-v0``."""
    ids = ma_ids()
    if env_id not in ids:
        raise ValueError(f"unknown multi-agent env id {env_id!r}; valid ids: {', '.join(ids)}")
    return make_ma(*ids[env_id], agent_obsk=agent_obsk, **overrides)
