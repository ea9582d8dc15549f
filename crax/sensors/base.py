"""The `Sensor` component and the context every sensor reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import mujoco
from flax import nnx, struct

from crax._mjx import mjx

if TYPE_CHECKING:
    from crax.suites.params import Choice, Range


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
        :class:`crax.suites.base.TaskEnv`; None in a context built by hand without one.
    """

    model: mjx.Model
    data: mjx.Data
    agent_xy: jax.Array
    agent_yaw: jax.Array
    task: dict[str, Any]
    action: jax.Array | None = None
    agent_velocity: jax.Array | None = None


class Sensor(nnx.Module):
    """A component that turns a :class:`Context` into a flat observation of ``size`` floats.

    Class attributes used when a sensor is added to a task by name (``crax.make(...,
    sensors={name: {parameter: value}})``, see :mod:`crax.compose`):
      requires: body kinds the sensor needs (like a suite's ``requires``).
      params: valid values of its constructor's parameters by name (:mod:`crax.suites.params`),
        checked before the model is built.
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    params: ClassVar[Mapping[str, Range | Choice]] = {}
    size: int

    def build(self, spec: mujoco.MjSpec) -> None:
        """Adds MJCF the sensor needs (a site, say) to the scene before it is compiled (most add none)."""

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled model (most sensors need nothing)."""

    def observe(self, ctx: Context) -> jax.Array:
        raise NotImplementedError
