"""Shared, lazily compiled env programs for the environment tests.

Compiling an env's reset/step costs seconds to tens of seconds on CPU, so every compiled function
lives in a session-wide cache keyed by env id and overrides (:func:`compiled`). Tests that need a
whole env share these few programs:

- ``arrange``: a hand-placed state (agent pose and velocity, every placeable's position) run
  through MuJoCo's forward pass (:mod:`tests.env.c_forward`), with the env's own observation and
  cost terms (a small jitted program); the returned
  :class:`crax.State` has exactly the structure of ``env.reset``'s, so it can be fed to ``step``.
- ``step``: ``jax.jit(env.step)``.

Each heavy program is used by one test file only, and ``pytest -n`` hands out whole files (see
``pytest_configure`` in ``tests/conftest.py``), so each program compiles once per run. The fixture
``no_compile`` fails a test that reaches MuJoCo's compiler (the bad-input tests).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
import crax.core.scene
from crax.core.env import State
from tests.env import c_forward

POINT_GOAL1 = dict(episode_length=7, goal_radius=0.5)
"""The shared PointGoal1 used by the step tests: short episodes and a widened goal (overrides)."""

POINT_GOAL3 = dict(lidar="natural")
"""The shared PointGoal3: ray-cast lidar, cylinder and cube pillars, cylinder and cube zones."""

FAR = 20.0
"""Where hand-placed layouts park the placeables a test does not use (beyond every lidar range)."""


class Compiled:
    """One env and its jitted functions (built on first use)."""

    def __init__(self, env_id: str, **overrides):
        self.env = crax.make(env_id, **overrides)
        self.step = jax.jit(self.env.step)
        self.reset = jax.jit(self.env.reset)
        self._write = jax.jit(self._write_fn)
        self._observe = jax.jit(self._observe_fn)

    @functools.cached_property
    def template(self) -> State:
        """Shapes and dtypes of a reset state (traced, not compiled)."""
        return self.env.state_shapes

    def far_layout(self) -> dict[str, np.ndarray]:
        """Every placeable parked far outside the arena, each at its own spot."""
        out, i = {}, 0
        for label, p in self.env.suite.placeables.items():
            xy = np.zeros((p.count, 2), np.float32)
            for j in range(p.count):
                xy[j] = (FAR + 1.5 * i, FAR)
                i += 1
            out[label] = xy
        return out

    def _write_fn(self, xy, yaw, qvel, ctrl, positions):
        env, suite, body = self.env, self.env.suite, self.env.body
        data = env._data0
        qpos = body.place(jnp.asarray(body.qpos0, jnp.float32), xy, yaw)  # qpos0 faces +x
        data = data.replace(
            qpos=data.qpos.at[slice(*body.qpos_adr)].set(qpos),
            qvel=data.qvel.at[slice(*body.qvel_adr)].set(qvel),
            ctrl=ctrl,
        )
        return suite.move(data, positions)

    def _observe_fn(self, data, key, steps, positions):
        task = {**positions, "hazards": self.env.suite.hazard_positions(positions), "key": key}
        return observed(self.env, data, task, self.template.metrics, {"task": task, "steps": steps})

    def arrange(
        self, xy=(0.0, 0.0), yaw=0.0, *, qvel=None, ctrl=None, steps: int = 0, seed: int = 0, **positions: Any
    ) -> State:
        """A hand-placed Point state: agent at ``xy`` facing ``yaw``; placeables by label.

        Labels not given are parked far away (:meth:`far_layout`); ``positions[label]`` may list
        fewer rows than the placeable's count, the rest stay parked.
        """
        layout = self.far_layout()
        for label, rows in positions.items():
            rows = np.asarray(rows, np.float32).reshape(-1, 2)
            layout[label][: len(rows)] = rows
        nv = self.env.body.qvel_adr[1] - self.env.body.qvel_adr[0]
        qvel = np.zeros(nv, np.float32) if qvel is None else np.asarray(qvel, np.float32)
        ctrl = np.zeros(self.env.mj_model.nu, np.float32) if ctrl is None else np.asarray(ctrl, np.float32)
        key = jax.random.split(jax.random.key(seed))[0]
        positions = {k: jnp.asarray(v) for k, v in layout.items()}
        data = self._write(jnp.asarray(xy, jnp.float32), jnp.asarray(yaw, jnp.float32), jnp.asarray(qvel),
                           jnp.asarray(ctrl), positions)
        state = self._observe(c_forward.forward(self.env, data), key, jnp.asarray(steps, jnp.int32), positions)
        assert jax.tree.structure(state) == jax.tree.structure(self.template)
        return state


def observed(env, data, task, metrics, info) -> State:
    """The state of ``env`` at ``data``, as a step reports it but with no reward: the suite's observation and
    costs from its context with ``task``; every metric of ``metrics`` (a state's, or its shapes) zero but the
    cost terms."""
    suite = env.suite
    ctx = suite.context(env.mjx_model, data, task)
    costs = suite.costs(ctx)
    zeroed = {k: jnp.zeros(v.shape, v.dtype) for k, v in metrics.items()}
    zero = jnp.zeros((), jnp.float32)
    return State(
        data=data, obs=suite.observe(ctx), reward=zero, cost=sum(costs.values(), zero), done=zero,
        truncation=zero, info=info, metrics={**zeroed, **{f"cost/{k}": v for k, v in costs.items()}},
    )


def host(tree):
    """Numpy copies of every array leaf (PRNG keys stay JAX arrays)."""
    return jax.tree.map(lambda x: x if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else np.asarray(x), tree)


def step_from(c: Compiled, state, *, qpos=None, qvel=None, action=None):
    """One ``c.step`` from ``state`` with ``qpos``/``qvel`` replaced (numpy in, numpy out); zero action by default."""
    state = jax.tree.map(jnp.asarray, state)
    data = state.data
    if qpos is not None:
        data = data.replace(qpos=jnp.asarray(qpos, jnp.float32))
    if qvel is not None:
        data = data.replace(qvel=jnp.asarray(qvel, jnp.float32))
    a = jnp.zeros(c.env.action_size) if action is None else jnp.asarray(action, jnp.float32)
    return host(c.step(state.replace(data=data), a))


@functools.cache
def compiled(env_id: str, **overrides) -> Compiled:
    return Compiled(env_id, **overrides)


@pytest.fixture(scope="session")
def point_goal1() -> Compiled:
    return compiled("PointGoal1", **POINT_GOAL1)


@pytest.fixture(scope="session")
def point_goal3() -> Compiled:
    return compiled("PointGoal3", **POINT_GOAL3)


@pytest.fixture
def no_compile(monkeypatch):
    """Fails any test that reaches MuJoCo's compiler: a check of the input must come first."""

    def compile_spec(spec):
        raise AssertionError("the model was compiled before the input was checked")

    monkeypatch.setattr(crax.core.scene, "compile_spec", compile_spec)
