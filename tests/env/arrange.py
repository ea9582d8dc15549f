"""Hand-placed states for any navigation suite (Goal, Button, Circle, Push).

:class:`Arranger` starts from the env's own ``reset`` (so the task state has exactly the suite's
structure, whatever extra entries it keeps: Button's active button and timers, Push's goal
velocity), then overrides the agent's pose and any task entries, parks every placeable not given
far away, writes the scene from the task (``suite.move``), runs MuJoCo's forward pass
(:mod:`tests.env.c_forward`) and computes the env's own observation and costs. The result can
be fed to ``env.step`` or to ``suite.transition``.

Unlike ``conftest.Compiled.arrange`` (Goal's task layout only) it also calls ``suite.prepare``,
which readies moving hazards (Button's gremlins) for the next physics step, as ``transition`` does.
Compiled programs: the env's ``reset`` (shared with ``Compiled.reset``) and this one's two small ones.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from crax.core.env import State
from tests.env import c_forward
from tests.env.conftest import Compiled, observed


class Arranger:
    """Hand-placement for one compiled env: a jitted write, MuJoCo's forward pass in C and a jitted
    observation (each program compiled once, on first use)."""

    def __init__(self, compiled: Compiled):
        self.compiled = compiled
        self.env = compiled.env
        self._write_fn = jax.jit(self._write)
        self._observe_fn = jax.jit(self._observe)

    def _write(self, state, xy, yaw, qvel, ctrl, task):
        suite, body = self.env.suite, self.env.body
        task = {**task, "hazards": suite.hazard_positions(task)}
        qpos = body.place(jnp.asarray(body.qpos0, jnp.float32), xy, yaw)  # qpos0 faces +x
        data = state.data.replace(
            qpos=state.data.qpos.at[slice(*body.qpos_adr)].set(qpos),
            qvel=state.data.qvel.at[slice(*body.qvel_adr)].set(qvel),
            ctrl=ctrl,
        )
        return suite.move(data, {label: task[label] for label in suite.placeables}), task

    def _observe(self, state, data, steps, task):
        data = self.env.suite.prepare(data, task)
        return observed(self.env, data, task, state.metrics, {**state.info, "task": task, "steps": steps})

    def __call__(
        self, xy=(0.0, 0.0), yaw=0.0, *, qvel=None, ctrl=None, steps: int = 0, seed: int = 0, **entries: Any
    ) -> State:
        """Agent at ``xy`` facing ``yaw``; ``entries`` override task entries by key.

        Placeables (by label) not given are parked far away; a placeable's rows may be fewer than
        its count, the rest stay parked. Other entries (``active=2``) replace the reset's value.
        """
        layout = self.compiled.far_layout()
        other = {}
        for k, v in entries.items():
            if k in layout:
                rows = np.asarray(v, np.float32).reshape(-1, 2)
                layout[k][: len(rows)] = rows
            else:
                other[k] = v
        key = jax.random.key(seed)
        state = self.compiled.reset(key)
        task = dict(state.info["task"])
        task.update({k: jnp.asarray(v) for k, v in layout.items()})
        for k, v in other.items():
            if k not in task:
                raise KeyError(f"{k!r} is not a task entry of {self.env.id}; entries: {', '.join(task)}")
            task[k] = jnp.asarray(v, task[k].dtype).reshape(task[k].shape)
        nv = self.env.body.qvel_adr[1] - self.env.body.qvel_adr[0]
        qvel = np.zeros(nv, np.float32) if qvel is None else np.asarray(qvel, np.float32)
        ctrl = np.zeros(self.env.mj_model.nu, np.float32) if ctrl is None else np.asarray(ctrl, np.float32)
        data, task = self._write_fn(state, jnp.asarray(xy, jnp.float32), jnp.asarray(yaw, jnp.float32),
                                    jnp.asarray(qvel), jnp.asarray(ctrl), task)
        return self._observe_fn(state, c_forward.forward(self.env, data), jnp.asarray(steps, jnp.int32), task)
