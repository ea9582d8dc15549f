"""What a sensor or a constraint may read at one step: the :class:`Context`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

import jax
from flax import struct

from crax.core.mjx import mjx


@struct.dataclass
class Context:
    """What a sensor or constraint may read at one step.

    Attributes:
      model, data: the MJX model and physics state after the step.
      agent_xy, agent_yaw: the body's torso position on the plane and its heading.
      agent_velocity: the torso's world-frame linear velocity (3,) after the step
        (:meth:`crax.bodies.base.Body.velocity`, from ``qvel``: ``cvel`` lags it by a substep);
        None in a context built by hand without one.
      task: the suite's task state (``info["task"]``): object positions by class name, e.g.
        ``task["goal"]`` of shape (1, 2) and ``task["hazards"]`` of shape (k, 2).
      action: the action of the step as the body's actuators received it: non-finite entries
        replaced by 0, clipped to [-1, 1], shape (action_size,); zeros at reset. Set by
        :class:`crax.suites.task_env.TaskEnv`; None in a context built by hand without one.
    """

    model: mjx.Model
    data: mjx.Data
    agent_xy: jax.Array
    agent_yaw: jax.Array
    task: dict[str, Any]
    action: jax.Array | None = None
    agent_velocity: jax.Array | None = None

    if TYPE_CHECKING:  # flax.struct.dataclass adds replace() at runtime; pyright cannot see it
        def replace(self, **updates: Any) -> Self: ...
