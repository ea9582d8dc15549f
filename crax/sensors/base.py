"""The `Sensor` component and the context every sensor reads."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import mujoco
from flax import nnx, struct

from crax._mjx import mjx


@struct.dataclass
class Context:
    """What a sensor or constraint may read at one step.

    Attributes:
      model, data: the MJX model and physics state after the step.
      agent_xy, agent_yaw: the body's torso position on the plane and its heading.
      task: the suite's task state (``info["task"]``): object positions by class name, e.g.
        ``task["goal"]`` of shape (1, 2) and ``task["hazards"]`` of shape (k, 2).
    """

    model: mjx.Model
    data: mjx.Data
    agent_xy: jax.Array
    agent_yaw: jax.Array
    task: dict[str, Any]


class Sensor(nnx.Module):
    """A component that turns a :class:`Context` into a flat observation of ``size`` floats."""

    name: ClassVar[str]
    size: int

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled model (most sensors need nothing)."""

    def observe(self, ctx: Context) -> jax.Array:
        raise NotImplementedError
