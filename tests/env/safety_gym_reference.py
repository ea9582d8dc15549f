"""crax's Safety-Gymnasium tasks on the states recorded from Safety-Gymnasium itself.

``tests/data/safety_gym_reference.json`` is written by ``tools/safety_gymnasium/sg_reference.py`` (run in a
Python 3.10 environment with ``safety-gymnasium==1.0.0``; docs/safety_gymnasium.md). This module
loads it and puts a crax env in each recorded state: :class:`Replica` writes the agent's pose,
velocity and controls (the Point's x, y, yaw; the Ant's whole joint state) and every object's
position (vases with their yaw) into the env's initial data, runs MuJoCo's forward pass on it
(:mod:`tests.env.c_forward`) and returns a :class:`crax.State` shaped as ``env.reset``'s, with the
suite's own observation and cost terms, so ``env.step`` continues from it.
"""

from __future__ import annotations

import functools
import json
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.core.env import State
from crax.core.mjx import mjx
from crax.gymnasium.env import action_box, observation_space
from crax.objects.push_box import PushBox
from crax.objects.vases import Vases
from tests import trees
from tests.env import c_forward

TURNED = (Vases, PushBox)
"""Objects whose recorded layout rows are (x, y, yaw): free bodies placed with a yaw."""

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


@functools.cache
def load(name: str) -> dict[str, Any]:
    """A reference file recorded in Safety-Gymnasium, from tests/data/."""
    return json.loads((DATA / name).read_text())


def reference() -> dict[str, Any]:
    return load("safety_gym_reference.json")


class Replica:
    """One crax env of a served Safety-Gymnasium id, set to recorded states.

    ``engine`` runs the placed state's forward pass: ``"c"``, MuJoCo's (:mod:`tests.env.c_forward`:
    nothing to compile), or ``"mjx"``, MJX's, for the states where MuJoCo 4.0 in C does not
    reproduce Safety-Gymnasium's MuJoCo 2.3.3 and MJX does (the Ant's Button)."""

    def __init__(self, env_id: str, record: dict[str, Any] | None = None, *, engine: str = "c"):
        if engine not in ("c", "mjx"):
            raise ValueError(f"engine must be 'c' or 'mjx', got {engine!r}")
        self.env_id = env_id
        self.engine = engine
        self.record = reference()["tasks"][env_id] if record is None else record
        self.env = crax.make(env_id)
        self.step = jax.jit(self.env.step)
        self._write = jax.jit(self._write_fn)
        self._observe = jax.jit(self._observe_fn)
        self._mjx_forward = jax.jit(lambda data: mjx.forward(self.env.mjx_model, data))

    @property
    def template(self) -> State:
        return self.env.state_shapes

    def _write_fn(self, qpos, qvel, ctrl, positions, yaws):
        """The recorded state written into the env's initial data, and the task a reset would hold."""
        env, suite, body = self.env, self.env.suite, self.env.body
        data = body.write_state(env._data0, qpos, qvel).replace(ctrl=ctrl)
        for label, p in suite.objects.items():
            data = p.write(data, positions[label], yaw=yaws[label]) if label in yaws else p.write(data, positions[label])
        # the task's other entries as a reset makes them (Goal's respawn key, Circle's circle)
        _, drawn = suite.init_task(env.mjx_model, env._data0, jax.random.key(0))
        return data, {**drawn, **positions, "hazards": suite.hazard_positions(positions)}

    def _settle(self, data, task):
        """Task entries read from the forwarded data (Button's wrong-button contacts)."""
        return task

    def _observe_fn(self, data, task):
        """The state of forwarded data: the suite's observation, cost terms and step cost."""
        env, suite = self.env, self.env.suite
        task = self._settle(data, task)
        ctx = env._context(data, task, jnp.zeros(env.action_size))
        costs = suite.costs(ctx)
        metrics = {k: jnp.zeros(v.shape, v.dtype) for k, v in self.template.metrics.items()}
        metrics.update({f"cost/{k}": v for k, v in costs.items()})
        zero = jnp.zeros((), jnp.float32)
        return State(data=data, obs=suite.observe(ctx), reward=zero, cost=suite.step_cost(costs), done=zero,
                     truncation=zero, info={"task": task, "steps": jnp.zeros((), jnp.int32)}, metrics=metrics)

    def _arrange(self, *args) -> State:
        data, task = self._write(*args)
        state = self._observe(self._forward(data), task)
        assert jax.tree.structure(state) == jax.tree.structure(self.template)
        return state

    def resets(self, keys: jax.Array) -> State:
        """Fresh episodes as ``env.reset`` draws them from ``keys``, batched: the suite's draw
        (``init_task`` on the key ``reset`` hands it), vmapped and jitted without physics, then each
        drawn state forwarded as :meth:`arrange`'s and observed with the suite's observation and costs.
        A vmapped ``env.reset`` would compile its own physics for 10-40 s on this CPU; the draw is
        ``reset``'s own code."""
        env = self.env
        draw = jax.jit(jax.vmap(lambda k: env.suite.init_task(env.mjx_model, env._data0, jax.random.split(k)[1])))
        data, task = draw(keys)
        states = []
        for i in range(len(keys)):
            data_i, task_i = trees.take((data, task), i)
            states.append(self._observe(self._forward(data_i), task_i))
        return trees.stack(states)

    def _forward(self, data):
        return self._mjx_forward(data) if self.engine == "mjx" else c_forward.forward(self.env, data)

    def arrange(self, case: dict[str, Any]) -> State:
        """The crax state of a recorded case (its ``agent`` and ``layout``)."""
        agent, layout = case["agent"], case["layout"]
        objects = self.env.suite.objects
        positions = {label: jnp.asarray(np.asarray(layout[label], np.float32)[:, :2]) for label in objects}
        yaws = {label: jnp.asarray(np.asarray(layout[label], np.float32).reshape(-1, 3)[:, 2])
                for label, p in objects.items() if isinstance(p, TURNED)}
        return self._arrange(self.agent_qpos(agent), jnp.asarray(agent["qvel"], jnp.float32),
                             jnp.asarray(agent["ctrl"], jnp.float32), positions, yaws)

    def agent_qpos(self, agent: dict[str, Any]) -> jax.Array:
        """The body's qpos of a recorded agent: as recorded (the Ant's ``qpos``), or the body
        placed at the recorded ``xy`` facing ``yaw`` (the Point)."""
        if "qpos" in agent:
            return jnp.asarray(agent["qpos"], jnp.float32)
        body = self.env.body
        return body.place(jnp.asarray(body.qpos0, jnp.float32), jnp.asarray(agent["xy"], jnp.float32),
                          jnp.asarray(agent["yaw"], jnp.float32))

    def rollout(self, case: dict[str, Any]) -> dict[str, np.ndarray]:
        """Steps from the case's state through its actions (the jitted step, compiled once for
        every case): per-step observation, reward, cost, metrics and the agent's planar pose
        (``xy``, ``yaw``: the Point's hinge angle), heading (the torso's yaw in (−π, π]), height,
        joint positions and velocities, every body's position and orientation, and Push's box
        (``box``: its centre). It stops after a step that ends the episode (the Ant's death), as
        Safety-Gymnasium's does."""
        state, rows = self.arrange(case), []
        box = self.env.mj_model.body("push_box").id if "push_box" in self.env.suite.objects else None
        for a in np.asarray(case["actions"], np.float32):
            state = self.step(state, jnp.asarray(a))
            q = self.env.body.qpos(state.data)
            rows.append({"obs": state.obs, "reward": state.reward, "cost": state.cost, "xy": q[:2], "yaw": q[2],
                         "qvel": self.env.body.qvel(state.data), "metrics": state.metrics,
                         "xpos": state.data.xpos, "xquat": state.data.xquat, "qpos": q, "done": state.done,
                         "heading": self.env.body.yaw(state.data), "z": self.env.body.position(state.data)[2],
                         **({} if box is None else {"box": state.data.xpos[box]})})
            if float(state.done) and not float(state.truncation):
                break
        return jax.tree.map(lambda *x: np.stack([np.asarray(v) for v in x]), *rows)


class ButtonReplica(Replica):
    """A crax Button env set to recorded states: the agent (:meth:`Replica.agent_qpos`), buttons,
    goal button and timer, hazards, gremlins (layout position and yaw, at rest on the floor as
    Safety-Gymnasium's reset leaves them)."""

    def _write_fn(self, qpos, qvel, ctrl, positions, gremlin_yaw, goal_button, timer):
        env, suite, body = self.env, self.env.suite, self.env.body
        data = body.write_state(env._data0, qpos, qvel).replace(ctrl=ctrl)
        for label, xy_ in positions.items():
            p = suite.objects[label]
            data = p.write(data, xy_, yaw=gremlin_yaw) if label == "gremlins" else p.write(data, xy_)
        positions = {**positions, "hazards": suite.hazard_positions(positions)}
        return suite.start_task(data, positions, goal_button, timer, jax.random.key(0))

    def _settle(self, data, task):
        return {**task, "wrong_button_contacts": self.env.suite.button_contacts(data, task)[1]}

    def arrange(self, case: dict[str, Any]) -> State:
        agent, layout = case["agent"], case["layout"]
        positions = {label: jnp.asarray(np.asarray(layout[label], np.float32)[:, :2])
                     for label in self.env.suite.objects if label != "goal"}
        gremlins = np.asarray(layout.get("gremlins") or np.zeros((0, 3)), np.float32).reshape(-1, 3)
        return self._arrange(self.agent_qpos(agent), jnp.asarray(agent["qvel"], jnp.float32),
                             jnp.asarray(agent["ctrl"], jnp.float32), positions, jnp.asarray(gremlins[:, 2]),
                             jnp.asarray(case["goal_button"], jnp.int32), jnp.asarray(case["timer"], jnp.int32))

    def rollout(self, case: dict[str, Any]) -> dict[str, np.ndarray]:
        """As :meth:`Replica.rollout`, plus each step's goal button, timer, time, and the gremlins'
        box and mocap positions. A press draws the next goal button at random in both engines: after
        each press crax's is set to the one Safety-Gymnasium drew, so the steps after stay comparable
        (``own_goal_button``: the one crax drew). It stops after a step that ends the episode (the
        Ant's death), as Safety-Gymnasium's does."""
        state, rows = self.arrange(case), []
        suite = self.env.suite
        mocap = jnp.asarray(suite.gremlins.mocap_ids) if "gremlins" in suite.objects else jnp.zeros(0, jnp.int32)
        for a, ref in zip(np.asarray(case["actions"], np.float32), case["steps"], strict=True):
            state = self.step(state, jnp.asarray(a))
            task = state.info["task"]
            q = self.env.body.qpos(state.data)
            rows.append({"obs": state.obs, "reward": state.reward, "cost": state.cost, "xy": q[:2], "yaw": q[2],
                         "heading": self.env.body.yaw(state.data), "z": self.env.body.position(state.data)[2],
                         "done": state.done, "metrics": state.metrics, "timer": task["timer"],
                         "own_goal_button": task["goal_button"],
                         "time": state.data.time, "gremlins": task.get("gremlins", jnp.zeros((0, 2))),
                         "gremlins_mocap": state.data.mocap_pos[mocap]})
            if ref["goal_met"]:
                k = ref["goal_button"]
                # set into the state's own array: an argument committed to a device where the rest of the
                # state is not (or the reverse) would compile the step again
                task = {**task, "goal_button": task["goal_button"].at[()].set(k), "goal": task["buttons"][k][None]}
                state = state.replace(info={**state.info, "task": task})
            if float(state.done) and not float(state.truncation):
                break
        return jax.tree.map(lambda *x: np.stack([np.asarray(v) for v in x]), *rows)


def cost_terms(state) -> dict[str, float]:
    """A state's raw cost terms by name (``cost/hazards`` -> ``hazards``)."""
    return {k.removeprefix("cost/"): float(v) for k, v in state.metrics.items() if k.startswith("cost/")}


def assert_arena(env, rec: dict[str, Any]) -> None:
    """:func:`assert_spaces_and_keys`, and the env's step time, episode length, object counts (the goal
    aside) and arena extent equal a recorded id's."""
    assert_spaces_and_keys(env, rec)
    assert env.dt == pytest.approx(rec["dt"]) and env.episode_length == rec["num_steps"]
    counts = {label: p.count for label, p in env.suite.objects.items() if label != "goal"}
    assert {k: v for k, v in rec["counts"].items() if v} == counts
    assert env.suite.extent == rec["extents"][2]


COST_ATOL = 1e-5
"""Tolerance of the hazards' raw cost (metres inside a hazard; float32 against float64: measured ≤ 4e-8 on
the Point's, Ant's and Racecar's records)."""


def assert_recorded_costs(state, c: dict[str, Any], *, counted: tuple[str, ...] = (), timed: bool = False) -> None:
    """An arranged state's cost terms against Safety-Gymnasium's on the recorded state ``c``: the same
    terms, the hazards' raw depth to :data:`COST_ATOL`, each term of ``counted`` exactly (contact points
    or an indicator; absent reads 0), each term's indicator as Safety-Gymnasium's info reports it, and
    the summed cost. ``timed``: a Button record lacks ``cost_buttons`` while the timer runs, where
    crax's term reads 0."""
    raw, terms, name = c["cost_raw"], cost_terms(state), c["name"]
    recorded = {k.removeprefix("cost_") for k in raw if k != "cost_sum"}
    assert (recorded <= set(terms)) if timed else (recorded == set(terms)), name
    assert terms.get("hazards", 0.0) == pytest.approx(raw.get("cost_hazards", 0.0), abs=COST_ATOL), name
    for term in counted:
        assert terms.get(term, 0.0) == raw.get(f"cost_{term}", 0.0), (name, term)
    for term in terms:
        assert float(terms[term] > 0) == c["cost_info"].get(f"cost_{term}", 0.0), (name, term)
    assert float(state.cost) == c["cost_info"]["cost_sum"], name


def assert_step_costs(out: dict[str, np.ndarray], c: dict[str, Any]) -> None:
    """A recorded rollout's summed cost and each term's, step by step, exactly as Safety-Gymnasium's."""
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in c["steps"]], err_msg=c["name"])
    for term in (k for k in c["steps"][0]["cost_info"] if k != "cost_sum"):
        got = out["metrics"][f"cost/{term.removeprefix('cost_')}"]
        np.testing.assert_array_equal(got, [s["cost_info"][term] for s in c["steps"]], err_msg=f"{c['name']} {term}")


def lidar_slices(record: dict[str, Any]) -> dict[str, slice]:
    """Each lidar's bins in a recorded id's flattened observation, by key (``"hazards_lidar"``)."""
    out, start = {}, 0
    for key, size in record["obs_keys"]:
        if key.endswith("_lidar"):
            out[key] = slice(start, start + size)
        start += size
    return out


def case(record: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    return next(c for c in record[kind] if c["name"] == name)


def assert_spaces(env, rec: dict[str, Any]) -> None:
    """``env``'s Gymnasium spaces (shape, dtype, bounds) equal a recorded id's."""
    for space, ref in ((observation_space(env), rec["observation_space"]), (action_box(env), rec["action_space"])):
        assert list(space.shape) == ref["shape"] and str(space.dtype) == ref["dtype"]
        np.testing.assert_array_equal(space.low, np.asarray(ref["low"]))
        np.testing.assert_array_equal(space.high, np.asarray(ref["high"]))


def assert_spaces_and_keys(env, rec: dict[str, Any]) -> None:
    """:func:`assert_spaces`, and the observation keys (the body's, then each lidar's, with sizes, in
    Safety-Gymnasium's flattened order) equal a recorded id's."""
    assert_spaces(env, rec)
    keys = [list(k) for k in env.body.obs_keys] + [[f"{s.target}_lidar", s.size] for s in env.suite.sensors]
    assert keys == rec["obs_keys"]
