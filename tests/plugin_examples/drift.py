"""Drift: a tiny suite. Move in +x across a floor of puddles."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies import NAVIGATION, Body
from crax.core.params import POSITIVE
from crax.costs import HazardProximity
from crax.objects import sample_layout
from crax.sensors import Lidar
from crax.suites import Suite, Transition
from tests.plugin_examples.puddles import Puddles


class Drift(Suite):
    """Reward: the agent's x progress per step. Cost: ``cost/puddles``, 1 per step on a puddle.
    Levels 1 and 2: 4 or 8 puddles. Observation: the body's own, then a pseudo-lidar of the
    puddles (8 bins). Accepts every navigation body: ``DiskDrift1``, ``PointDrift2``, ...

    Args:
      body: a navigation body.
      level: 1 or 2.
      puddle_radius: radius of the puddles (m).
      extent: the layout's half-width (m).
    """

    name = "Drift"
    requires = frozenset({NAVIGATION})
    levels = (1, 2)
    params = {"puddle_radius": POSITIVE, "extent": POSITIVE}

    def __init__(self, body: Body, level: int, *, puddle_radius: float = 0.3, extent: float = 2.0):
        self.body = body
        self.level = level
        self.extent = extent
        self.puddles = Puddles(4 * level, puddle_radius)
        self.sensors = nnx.List([Lidar("puddles", num_bins=8)])
        self.constraints = nnx.List([HazardProximity(self.puddles, cost_scale=1.0, term="puddles")])

    @property
    def placeables(self) -> dict[str, Puddles]:
        return {"puddles": self.puddles}  # label -> placeable: built as mocap bodies puddles/0, puddles/1, ...

    def init_task(self, model, data, key: jax.Array) -> tuple[Any, dict[str, Any]]:
        k_layout, k_body, k_yaw = jax.random.split(key, 3)
        keepout = jnp.asarray([0.4] + [self.puddles.keepout] * self.puddles.count)  # the agent first
        xy = sample_layout(k_layout, keepout, self.extent)
        qpos, qvel = self.body.initial_state(k_body)
        yaw = jax.random.uniform(k_yaw, (), minval=-jnp.pi, maxval=jnp.pi)
        data = self.body.write_state(data, self.body.place(qpos, xy[0], yaw), qvel)
        data = self.puddles.write(data, xy[1:])
        return data, {"puddles": xy[1:]}

    def transition(self, model, before, data, task, action) -> tuple[Any, Transition]:
        progress = self.body.position(data)[0] - self.body.position(before)[0]
        return data, Transition(task=task, rewards={"progress": progress}, reward=progress,
                                terminated=~self.body.healthy(data))
