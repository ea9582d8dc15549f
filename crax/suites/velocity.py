"""Velocity: run forward under a speed limit (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import LOCOMOTION, PLANAR, Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, REAL, Choice, Param, TaskParam
from crax.costs.velocity import VelocityThreshold
from crax.suites.base import Suite, Transition

LEVEL_FACTORS = {1: 1.0, 2: 0.75, 3: 0.5}
"""The velocity threshold by level, as a factor of the body's base threshold."""


class Velocity(Suite):
    """Locomotion reward with a velocity constraint; accepts every locomotion body.

    ``r = reward_scaler · (v_x + healthy_reward·1[healthy] − ctrl_cost·‖a‖²)`` with the body's
    healthy bonus and control cost; ``metrics["base_reward"]`` keeps the unscaled sum (the
    ``reward/*`` terms are unscaled too). The cost is ``w · 1[v > τ]`` (``cost_mode="binary"``) or
    ``w · max(0, v − τ)`` (``"hinge"``), with v the forward x velocity for planar bodies and the
    planar speed otherwise, both of the body's :meth:`~crax.bodies.base.Body.locomotion_position`
    (the torso; the centre of mass for Humanoid), and
    τ = body base threshold × level factor (1.0, 0.75, 0.5).

    Args:
      body: a locomotion body.
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Velocity"
    requires = frozenset({LOCOMOTION})
    params = {
        "reward_scaler": Param(0.01, REAL, "scale of the locomotion reward"),
        "cost_mode": Param("binary", Choice(("binary", "hinge")), "cost w·1[v > τ] (binary) or w·max(0, v − τ) (hinge)"),
        "cost_weight": Param(1.0, NON_NEGATIVE, "w"),
        "velocity_threshold": Param(None, NON_NEGATIVE,
                                    "τ (m/s); None: the body's base τ times the level's factor "
                                    f"({', '.join(f'{f:g}' for f in LEVEL_FACTORS.values())})"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        velocity_threshold = v.velocity_threshold
        if velocity_threshold is None:
            if body.velocity_threshold is None:
                raise ValueError(
                    f"body {body.name!r} has no measured base velocity threshold; pass velocity_threshold=<m/s>"
                )
            velocity_threshold = body.velocity_threshold * LEVEL_FACTORS[level]
        self.body = body
        self.level = level
        self.planar = PLANAR in body.kinds
        self.reward_scaler = TaskParam(jnp.asarray(v.reward_scaler, jnp.float32))
        self.sensors = nnx.List([])
        self.constraints = nnx.List([VelocityThreshold(velocity_threshold, mode=v.cost_mode, weight=v.cost_weight)])

    def build(self, spec: mujoco.MjSpec) -> None:
        del spec  # an open floor: the arena is enough

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        qpos, qvel = self.body.initial_state(key)
        data = self.body.write_state(data, qpos, qvel)
        return data, {"velocity": jnp.zeros((), jnp.float32)}

    def transition(self, model, before, data, task, action):
        displacement = self.body.planar_velocity(before, data)
        forward = displacement[0]
        speed = forward if self.planar else jnp.linalg.norm(displacement)
        healthy = self.body.healthy(data)
        rewards = {
            "forward": forward,
            "healthy": self.body.healthy_reward * healthy.astype(jnp.float32),
            "ctrl": -self.body.ctrl_cost * jnp.sum(jnp.square(jnp.clip(action, -1.0, 1.0))),
        }
        base = rewards["forward"] + rewards["healthy"] + rewards["ctrl"]
        return data, Transition(
            task={**task, "velocity": speed}, rewards=rewards, reward=self.reward_scaler[...] * base,
            terminated=~healthy, extra_metrics={"base_reward": base, "velocity": speed},
        )
