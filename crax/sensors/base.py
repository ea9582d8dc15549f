"""The :class:`Sensor` component: a flat observation read from a :class:`crax.core.context.Context`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import jax
import mujoco
from flax import nnx

from crax.core.context import Context

if TYPE_CHECKING:
    from crax.core.params import Choice, Range


class Sensor(nnx.Module):
    """A component that turns a :class:`Context` into a flat observation of ``size`` floats.

    Class attributes used when a sensor is added to a task by name (``crax.make(...,
    sensors={name: {parameter: value}})``, see :mod:`crax.tasks.compose`):
      requires: body kinds the sensor needs (like a suite's ``requires``).
      params: valid values of its constructor's parameters by name (:mod:`crax.core.params`),
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
