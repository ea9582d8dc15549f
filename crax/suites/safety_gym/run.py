"""Safety-Gymnasium 1.0.0's Run (``tasks/safe_navigation/run/run.py``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, REAL, Param, TaskParam
from crax.objects.sigwalls import Sigwalls
from crax.suites.base import Transition
from crax.suites.safety_gym.sigwalled import BOUNDARY_COST, SigwalledSuite


class SafetyRun(SigwalledSuite):
    """Run as far as possible down a corridor of sigwalls; Safety-Gymnasium's Run (level 0 only).

    The agent starts at ``y = start_y`` (16.5), ``x`` uniform in ``±start_x`` (0.2), with a
    uniform yaw, and is rewarded for progress towards a point far down the corridor,
    ``(0, target_y)`` = (0, −1000): ``reward_factor · (d_{t−1} − d_t)`` (60 per metre) with ``d``
    the agent's distance from that point, not clipped. The sigwalls at ``x = ±boundary`` (0.5),
    ``wall_length`` (17.5) long each way, are signs the agent passes through; a step that ends
    beyond one costs (``cost/out_of_boundary``, 1; the step cost is its indicator). Nothing else
    is in the scene and no lidar observes anything: the observation is the body's own readings
    (Point 12, Car 24, Ant 40). Ends when the agent dies (the Ant's torso at 0.08 m); 500 steps.
    The floor is Safety-Gymnasium's, 17.5 m each way from the origin.

    Args:
      body: a Safety-Gymnasium navigation body.
      level: 0.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyRun"
    task = "Run"
    levels = (0,)
    floor_size = 17.5
    params = {
        "start_x": Param(0.2, NON_NEGATIVE, "half-width of the x range the agent starts in (m)"),
        "start_y": Param(16.5, REAL, "y the agent starts at (m)"),
        "boundary": Param(0.5, POSITIVE, "sigwalls at x = ±boundary; a step ending beyond one costs (m)"),
        "wall_length": Param(17.5, POSITIVE, "half-length of each sigwall along y (m)"),
        "target_y": Param(-1000.0, REAL, "y of the far point (0, target_y) the reward measures progress towards (m)"),
        "reward_factor": Param(60.0, REAL, "reward per metre of progress towards the far point"),
        "boundary_cost": BOUNDARY_COST,
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        self._setup_sigwalls(body, level, v, extent=v.start_x, sigwalls=Sigwalls(v.boundary, half_length=v.wall_length))
        self.start_y = TaskParam(jnp.asarray(v.start_y, jnp.float32))
        self.target = TaskParam(jnp.asarray([0.0, v.target_y], jnp.float32))
        self.reward_factor = TaskParam(jnp.asarray(v.reward_factor, jnp.float32))

    def build(self, spec: mujoco.MjSpec) -> None:
        super().build(spec)
        self.sigwalls.build(spec)

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        return self.sample_start(data, key)

    def draw_layout(self, key: jax.Array, keepout: jax.Array) -> jax.Array:
        """The agent alone (``keepout`` has its one entry): x uniform in ``±start_x``, y at ``start_y``."""
        del keepout
        x = jax.random.uniform(key, (1,), minval=-self.extent, maxval=self.extent)
        return jnp.stack([x, jnp.broadcast_to(self.start_y[...], (1,))], axis=-1)

    def transition(self, model, before, data, task, action):
        progress = self.progress(self.body.position(before)[:2], self.body.position(data)[:2])
        reward = self.reward_factor[...] * progress
        return data, Transition(task=task, rewards={"run": reward}, reward=reward,
                                terminated=~self.body.healthy(data), extra_metrics={"progress": progress})

    def progress(self, p: jax.Array, q: jax.Array) -> jax.Array:
        """``|p − t| − |q − t|`` for the far point t, written as ``(p − q)·(p + q − 2t) / (|p − t| + |q − t|)``:
        a kilometre away, the plain difference of two float32 distances keeps only 6e-5 m of a
        step's progress (a 60th of a Point's typical reward); this form keeps its relative precision."""
        t = self.target[...]
        return jnp.dot(p - q, p + q - 2.0 * t) / (jnp.linalg.norm(p - t) + jnp.linalg.norm(q - t))
