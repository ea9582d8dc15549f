"""`PlanarBody`: an upright robot on the x-z plane with a height and pitch health rule (Walker2d, Hopper)."""

from __future__ import annotations

import math
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.bodies.base import LOCOMOTION, PLANAR, Body
from crax.core.mjx import mjx


class PlanarBody(Body):
    """A body whose root joints are slide x (``rootx``), slide z (``rootz``), hinge y (``rooty``).

    The torso body sits at its standing height and ``rootz`` has ``ref`` equal to that height, so
    the ``rootz`` coordinate *is* the torso height (the torso's world z computed from the same
    qpos), and ``rooty`` is the torso pitch, as the torso has no rotation of its own. The health
    rule reads both from qpos, like the observation (``data.xpos`` after a step lags qpos by one
    substep): healthy iff ``healthy_z[0] <= z <= healthy_z[1]`` and ``|pitch| < healthy_pitch``.

    Observation (Gymnasium's): qpos without root x, then qvel clipped to ``±qvel_clip``.

    Class attributes (besides :class:`Body`'s):
      healthy_pitch: bound on ``|pitch|`` (radians) outside which the episode terminates.
      qvel_clip: the velocity part of the observation is clipped to ``±qvel_clip``.
    """

    kinds = frozenset({LOCOMOTION, PLANAR})
    healthy_pitch: ClassVar[float] = math.inf
    qvel_clip: ClassVar[float] = 10.0

    def height(self, data: mjx.Data) -> jax.Array:
        """Torso height: the ``rootz`` coordinate."""
        return self.qpos(data)[1]

    def pitch(self, data: mjx.Data) -> jax.Array:
        """Torso pitch: the ``rooty`` hinge angle (radians, positive turns +z towards +x)."""
        return self.qpos(data)[2]

    def observe(self, data: mjx.Data) -> jax.Array:
        return jnp.concatenate([self.qpos(data)[1:], jnp.clip(self.qvel(data), -self.qvel_clip, self.qvel_clip)])

    def healthy(self, data: mjx.Data) -> jax.Array:
        z = self.height(data)
        lo, hi = self.healthy_z if self.healthy_z is not None else (-math.inf, math.inf)
        return (z >= lo) & (z <= hi) & (jnp.abs(self.pitch(data)) < self.healthy_pitch)
