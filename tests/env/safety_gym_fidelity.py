"""Checks of crax's Safety-Gymnasium ids against the states and rollouts Safety-Gymnasium recorded.

The task families' test files (``tests/env/test_safety_goal.py``, ``_button``, ``_push``,
``_circle``) and the Doggo's, the Racecar's and Run's run these on a
:class:`~tests.env.safety_gym_reference.Replica` of each id; the agents' readings and tolerances
are in :mod:`tests.env.safety_gym_agents`, the bounds on rollouts in :mod:`tests.env.safety_gym_tracks`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.core.env import State
from crax.gymnasium import safety as safety_gymnasium
from crax.gymnasium.safety.make_args import resolve_id
from crax.suites.task_env import TaskEnv
from tests.env.safety_gym_agents import Agent, agent_of
from tests.env.safety_gym_reference import Replica, assert_arena, assert_recorded_costs, case, cost_terms, reference
from tests.env.safety_gym_tracks import Track, assert_track


@dataclasses.dataclass(frozen=True)
class Norm:
    """A bound on a reading's distance from the recorded one, relative to the recorded one's norm."""

    rtol: float


Tolerance = float | Norm | None
"""Of a part of the observation: an absolute bound on each entry, a :class:`Norm`, or None (not compared)."""


@dataclasses.dataclass(frozen=True)
class Pressed:
    """Recorded states where something presses into the agent, and how they are compared instead.

    ``states`` is searched for in each state's name (:func:`re.search`); ``readings`` replaces the
    agent's tolerances of those parts; the raw counts of ``uncounted`` cost terms (contact points)
    are not compared there, their indicators are."""

    states: str
    readings: Mapping[str, Tolerance]
    uncounted: tuple[str, ...] = ()


def assert_observation(got: np.ndarray, ref: np.ndarray, agent: Agent, tolerances: Mapping[str, Tolerance],
                       name: str) -> None:
    """Each part of an observation (:attr:`Agent.parts`) within its tolerance of the recorded one."""
    for part, where in agent.parts.items():
        tol = tolerances[part] if got[where].size else None  # an agent's every reading has its tolerance
        if tol is None:
            continue
        if isinstance(tol, Norm):
            distance, norm = np.linalg.norm(got[where] - ref[where]), np.linalg.norm(ref[where])
            assert distance <= tol.rtol * norm, (name, part, distance / norm)
        else:
            np.testing.assert_allclose(got[where], ref[where], atol=tol, err_msg=f"{name} {part}")


def assert_states(replica: Replica, *pressed: Pressed, counted: tuple[str, ...] = (),
                  timed: bool = False) -> list[tuple[dict[str, Any], State]]:
    """Every recorded state of the replica's id arranged in crax: its observation within its agent's
    tolerances (where ``pressed`` rules match, later ones override earlier ones), its costs as
    :func:`~tests.env.safety_gym_reference.assert_recorded_costs` compares them. Returns each
    recorded state with crax's."""
    agent, out = agent_of(replica.env_id), []
    for c in replica.record["states"]:
        state = replica.arrange(c)
        tolerances: dict[str, Tolerance] = dict(agent.atol)
        terms = counted
        for rule in pressed:
            if re.search(rule.states, c["name"]):
                tolerances.update(rule.readings)
                terms = tuple(t for t in terms if t not in rule.uncounted)
        assert_observation(np.asarray(state.obs), np.asarray(c["obs"]), agent, tolerances, c["name"])
        assert_recorded_costs(state, c, counted=terms, timed=timed)
        out.append((c, state))
    return out


def assert_rollout(replica: Replica, name: str, track: Track) -> dict[str, np.ndarray]:
    """The recorded rollout ``name`` stepped in crax (:meth:`Replica.rollout`, returned) within
    ``track`` of Safety-Gymnasium's (:func:`~tests.env.safety_gym_tracks.assert_track`)."""
    c = case(replica.record, "rollouts", name)
    out = replica.rollout(c)
    assert_track(out, c["steps"], track, agent_of(replica.env_id).body)
    return out


def assert_navigation_arena(replica: Replica, episode_length: int = 1000) -> None:
    """:func:`~tests.env.safety_gym_reference.assert_arena`, and the observation's size, the body's
    readings, the control step, the episode's length, MuJoCo's timestep, frame skip and integrator
    equal the recorded id's and the agent's."""
    env, rec, agent = replica.env, replica.record, agent_of(replica.env_id)
    assert_arena(env, rec)  # every key, its size, Safety-Gymnasium's flattened order
    assert env.observation_size == sum(n for _, n in rec["obs_keys"]) and env.suite.body_obs_size == agent.body
    assert env.episode_length == rec["num_steps"] == episode_length
    assert agent.physics is not None
    dt, timestep, frame_skip, integrator = agent.physics
    m = env.mj_model
    assert env.dt == pytest.approx(rec["dt"]) == dt
    assert (m.opt.timestep, env.body.frame_skip, m.opt.integrator) == (timestep, frame_skip, integrator)


def assert_served(task: str, agent: Agent, suite_cls: type) -> None:
    """A task's three levels on an agent: listed, parsed, resolved (and their paper variants), named by
    the suite, built by the Safety-Gymnasium face with the recorded spaces; a fourth level refused,
    naming the three."""
    served = [agent.id(task, level) for level in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[:2] == (agent.body_cls, suite_cls) for i in served)
    assert resolve_id(served[1]) == served[1]
    assert resolve_id(served[1], paper_variant=True) == f"{agent.name}{task}1"
    assert TaskEnv(suite_cls(agent.body_cls(), 2)).id == served[2]  # the suite names it, not make
    face, rec = safety_gymnasium.make(served[1]), reference()["tasks"][served[1]]  # built, not compiled
    assert face.unwrapped.env.id == served[1]
    for space, ref in ((face.observation_space, rec["observation_space"]), (face.action_space, rec["action_space"])):
        assert list(space.shape) == ref["shape"] and space.dtype == np.float64
    np.testing.assert_array_equal(face.action_space.high, rec["action_space"]["high"])
    assert safety_gymnasium.make(served[1], paper_variant=True).unwrapped.env.id == f"{agent.name}{task}1"
    with pytest.raises(ValueError, match=", ".join(served)):
        crax.make(agent.id(task, 3))


def assert_dies_on_its_back(replica: Replica, atol: float) -> None:
    """The Ant's recorded death (its torso on the floor: 0.0625 m < 0.08 m): the one step ends the
    episode with a finite state, its reward within ``atol``, its cost as recorded."""
    c = case(replica.record, "rollouts", "dies_on_its_back")
    out = replica.rollout(c)
    (step,) = c["steps"]
    assert not step["alive"] and list(out["done"]) == [1.0] and out["metrics"]["env/nonfinite_state"][0] == 0
    assert out["reward"][0] == pytest.approx(step["reward"], abs=atol) and out["cost"][0] == step["cost"]


def assert_reward_terms(out: dict[str, np.ndarray], c: dict[str, Any], atol: float, upto: int | None = None) -> None:
    """Push's reward and its terms over a recorded rollout's first ``upto`` steps (None: all): the
    agent–box and box–goal progress from Safety-Gymnasium's recorded distances, the goal's bonus."""
    steps = c["steps"][:upto]
    d_box = np.asarray([c["dist_box"]] + [s["dist_box"] for s in steps])
    d_goal = np.asarray([c["dist_box_goal"]] + [s["dist_box_goal"] for s in steps])
    terms = {"box": d_box[:-1] - d_box[1:], "box_goal": d_goal[:-1] - d_goal[1:],
             "goal": np.asarray([s["goal_met"] for s in steps], np.float32)}
    for k, v in terms.items():
        np.testing.assert_allclose(out["metrics"][f"reward/{k}"][:upto], v, rtol=0, atol=atol,
                                   err_msg=f"{c['name']} reward/{k}")
    np.testing.assert_allclose(out["reward"][:upto], [s["reward"] for s in steps], rtol=0, atol=atol, err_msg=c["name"])


def assert_rests_without_cost(replica: Replica, state: State, steps: int = 20) -> State:
    """``steps`` steps of zero action from ``state``, none of which costs (every cost term 0); the last state."""
    for _ in range(steps):
        state = replica.step(state, jnp.zeros(replica.env.action_size))
        assert float(state.cost) == 0.0 and not any(cost_terms(state).values())
    return state


def assert_layouts_fit(suite, points: np.ndarray, keepout: np.ndarray) -> None:
    """Drawn layouts (draws, points, 2) as Safety-Gymnasium's placement keeps them: each point in the
    arena shrunk by its keepout, each pair of points as far apart as their keepouts."""
    assert np.all(np.abs(points) <= suite.extent - keepout[None, :, None] + 1e-6)
    gaps = np.linalg.norm(points[:, :, None] - points[:, None], axis=-1) - keepout[:, None] - keepout[None]
    assert np.all(gaps[:, ~np.eye(len(keepout), dtype=bool)] >= -1e-6)


def drawn_layouts(replica: Replica, states: State) -> tuple[np.ndarray, np.ndarray]:
    """Fresh draws' layouts (:meth:`Replica.resets`): the agent's and every object's planar position
    (draws, points, 2), and each point's keepout."""
    env, suite = replica.env, replica.env.suite
    agent = np.asarray(jax.vmap(lambda d: env.body.position(d)[:2])(states.data))
    points = np.concatenate([agent[:, None]] + [np.asarray(states.info["task"][label]) for label in suite.objects], 1)
    keepout = np.concatenate([[suite.agent_keepout]] + [[p.keepout] * p.count for p in suite.objects.values()])
    return points, keepout
