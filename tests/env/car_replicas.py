"""crax Car envs set to states recorded in Safety-Gymnasium, for the tasks whose replica writes more
than :class:`~tests.env.safety_gym_reference.Replica` does (Button: buttons, goal button, timer,
gremlins). The Point's :class:`ButtonReplica` places the agent by x, y and yaw; the Car's writes its
whole recorded joint state (qpos 13, qvel 11, 2 controls)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from crax.core.env import State
from crax.core.mjx import mjx
from tests.env.test_safety_point_button import ButtonReplica


class CarButtonReplica(ButtonReplica):
    """A crax Button env on the Car set to recorded states: the Car's whole joint state, the
    buttons, goal button and timer, hazards, gremlins (as :class:`ButtonReplica`)."""

    def _arrange_fn(self, qpos, qvel, ctrl, positions, gremlin_yaw, goal_button, timer):
        env, suite, body = self.env, self.env.suite, self.env.body
        data = body.write_state(env._data0, qpos, qvel).replace(ctrl=ctrl)
        for label, xy in positions.items():
            p = suite.objects[label]
            data = p.write(data, xy, yaw=gremlin_yaw) if label == "gremlins" else p.write(data, xy)
        positions = {**positions, "hazards": suite.hazard_positions(positions)}
        data, task = suite.start_task(data, positions, goal_button, timer, jax.random.key(0))
        data = mjx.forward(env.mjx_model, data)
        task["wrong_button_contacts"] = suite.button_contacts(data, task)[1]
        ctx = env._context(data, task, jnp.zeros(env.action_size))
        costs = suite.costs(ctx)
        metrics = {k: jnp.zeros(v.shape, v.dtype) for k, v in self.template.metrics.items()}
        metrics.update({f"cost/{k}": v for k, v in costs.items()})
        zero = jnp.zeros((), jnp.float32)
        return State(data=data, obs=suite.observe(ctx), reward=zero, cost=suite.step_cost(costs), done=zero,
                     truncation=zero, info={"task": task, "steps": jnp.zeros((), jnp.int32)}, metrics=metrics)

    def arrange(self, case: dict[str, Any]) -> State:
        agent, layout = case["agent"], case["layout"]
        positions = {label: jnp.asarray(np.asarray(layout[label], np.float32)[:, :2])
                     for label in self.env.suite.objects if label != "goal"}
        gremlins = np.asarray(layout.get("gremlins") or np.zeros((0, 3)), np.float32).reshape(-1, 3)
        state = self._arrange(self.agent_qpos(agent), jnp.asarray(agent["qvel"], jnp.float32),
                              jnp.asarray(agent["ctrl"], jnp.float32), positions, jnp.asarray(gremlins[:, 2]),
                              jnp.asarray(case["goal_button"], jnp.int32), jnp.asarray(case["timer"], jnp.int32))
        assert jax.tree.structure(state) == jax.tree.structure(self.template)
        return state
