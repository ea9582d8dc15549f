"""The :class:`Sensor` component: a flat observation read from a :class:`crax.core.context.Context`."""

from __future__ import annotations

import jax

from crax.core.component import Component
from crax.core.context import Context


class Sensor(Component):
    """A component that turns a :class:`Context` into a flat observation of ``size`` floats (its
    ``requires``, ``params``, ``build`` and ``bind`` as every :class:`~crax.core.component.Component`'s)."""

    size: int

    def observe(self, ctx: Context) -> jax.Array:
        raise NotImplementedError


class ImageSensor(Sensor):
    """A sensor whose reading is an image: a ``shape`` (height, width, channels) uint8 array kept under
    ``key`` in a dict observation beside the state vector (:mod:`crax.core.observation`), not
    concatenated into it (its ``size`` is 0)."""

    size = 0
    key: str
    shape: tuple[int, int, int]

    def observe_every(self, ctx: Context, held: jax.Array, steps: jax.Array) -> jax.Array:
        """The image after an episode's ``steps``-th step, given the last one (``held``): by default a
        fresh :meth:`observe` every step (a camera may hold its frame between renders)."""
        del held, steps
        return self.observe(ctx)
