"""Safety-Gymnasium's vases: light free boxes on the floor that the agent can knock over."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core import palette
from crax.core.mjx import mjx
from crax.objects.free_boxes import FreeBoxes


class Vases(FreeBoxes):
    """``count`` free-floating boxes (Safety-Gymnasium 1.0.0's ``Vases``), moved only by physics.

    Each vase is a :class:`~crax.objects.free_boxes.FreeBoxes` box of half-size ``size`` and
    ``density`` (Safety-Gymnasium: 0.1 m, 0.001 kg/m³, so 8 mg), resting ``sink`` below its nominal
    height as Safety-Gymnasium starts it. Vases do not collide with each other (Safety-Gymnasium's
    do; they only meet when the agent pushes one into another). Their costs are
    :mod:`crax.costs.vases`.

    Args:
      count: number of vases.
      size: half-size of the box (m).
      density: kg/m³.
      sink: how far below ``size`` the centre starts (m).
      keepout: placement clearance radius.
    """

    name = "Vases"
    rgba = palette.SAFETY_GYM["vase"]

    def __init__(self, count: int, *, size: float = 0.1, density: float = 0.001, sink: float = 4e-5,
                 keepout: float = 0.15):
        super().__init__(count, size=size, density=density, keepout=keepout, z=size - sink)
        self.sink = sink

    def speed(self, data: mjx.Data) -> jax.Array:
        """Each vase's linear speed (count,): the norm of its free joint's world-frame velocity."""
        v = data.qvel[jnp.asarray(self.qvel_adr)[:, None] + jnp.arange(3)]
        return jnp.sqrt(jnp.sum(v * v, axis=-1))
