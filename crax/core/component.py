"""`Component`: what a part of a task that ``crax.make`` adds by name declares (:mod:`crax.tasks.compose`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import mujoco
from flax import nnx

if TYPE_CHECKING:
    from crax.core.params import Choice, Range


class Component(nnx.Module):
    """A part added to a task by name: a constraint term (:class:`crax.costs.base.Constraint`) or a
    sensor (:class:`crax.sensors.base.Sensor`).

    Class attributes used when it is added by name (``crax.make(..., constraints={name: {parameter:
    value}})`` or ``sensors=...``, see :mod:`crax.tasks.compose`):
      requires: body kinds it needs (like a suite's ``requires``).
      params: valid values of its constructor's parameters by name (:mod:`crax.core.params`),
        checked before the model is built.
      reads_post_constraint: whether it reads the body accelerations and forces of MuJoCo's
        ``mj_rnePostConstraint`` (:func:`crax.core.physics.post_constraint`); with
        ``physics="warp"`` the model then computes them in every step.
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    params: ClassVar[Mapping[str, Range | Choice]] = {}
    reads_post_constraint: ClassVar[bool] = False

    def build(self, spec: mujoco.MjSpec) -> None:
        """Adds MJCF it needs (a site, say) to the scene before it is compiled (most add none)."""

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled model (most need nothing)."""
