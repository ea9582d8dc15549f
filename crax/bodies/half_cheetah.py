"""HalfCheetah: Gymnasium's planar two-legged runner."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.bodies.base import LOCOMOTION, PLANAR, Body
from crax.core.mjx import mjx


class HalfCheetah(Body):
    """HalfCheetah (docs/SPEC.md section 2): 6 motors, obs 18 = qpos without root x (8), qvel (9), root z.

    Never terminates. Velocity suite: no healthy bonus, control cost 0.1, base τ = 3.21 m/s.
    """

    name = "HalfCheetah"
    kinds = frozenset({LOCOMOTION, PLANAR})
    asset = "half_cheetah.xml"
    timestep = 0.01
    frame_skip = 5
    solver_iterations = 4
    ls_iterations = 8
    reset_noise = 0.1
    healthy_reward = 0.0
    ctrl_cost = 0.1
    velocity_threshold = 3.21
    feet = ("bfoot", "ffoot")

    def observe(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        return jnp.concatenate([q[1:], v, q[1:2]])
