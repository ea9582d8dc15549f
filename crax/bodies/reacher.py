"""Reacher: Gymnasium's two-link arm on a fixed base, reaching for a target on the table."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import ARM, Body
from crax.core.mjx import mjx


class Reacher(Body):
    """Reacher (docs/SPEC.md section 2): 2 motors (gear 200), obs 11, never terminates, dt 0.02.

    Observation (Gymnasium's layout): cos θ (2), sin θ (2), target xy (2), joint velocities (2),
    fingertip − target (3), with θ the two joint angles. The fingertip is the ``fingertip`` body's
    position (``data.xpos``, as Gymnasium's ``get_body_com``); the target is the mocap body
    ``agent/target`` that belongs to the arm's MJCF so the observation is self-contained: the suite
    moves it (:meth:`set_target`) and the body reads it back. The base stands at the world origin,
    so target xy is also the target relative to the base.

    Every geom is visual only (no contacts at all); the only constraint is joint1's limit (±3 rad),
    so one Newton iteration solves it. Reset noise follows Gymnasium: uniform ±0.1 on the joint
    angles and ±0.005 on the joint velocities.

    An arm body for the Reach suite provides :meth:`set_target`, :meth:`target`,
    :meth:`fingertip` and :meth:`chain` (the joint positions from base to fingertip).
    """

    name = "Reacher"
    kinds = frozenset({ARM})
    asset = "reacher.xml"
    timestep = 0.01
    frame_skip = 2
    solver_iterations = 1
    ls_iterations = 4
    reset_noise = 0.1
    qvel_noise: ClassVar[float] = 0.005
    floor_contact = False
    links: ClassVar[tuple[str, ...]] = ("link0", "link1", "fingertip")
    """Bodies whose origins are the arm's joints and tip, base first."""

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.chain_ids = tuple(int(m.body(self.prefix + b).id) for b in self.links)
        target = m.body(self.prefix + "target")
        self.target_id = int(target.id)
        self.target_mocap = int(m.body_mocapid[target.id])
        self.target_z = float(m.body_pos[target.id][2])

    def initial_state(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        kp, kv = jax.random.split(key)
        n = self.reset_noise
        qpos = jnp.asarray(self.qpos0, jnp.float32) + jax.random.uniform(kp, (2,), minval=-n, maxval=n)
        qvel = jax.random.uniform(kv, (2,), minval=-self.qvel_noise, maxval=self.qvel_noise)
        return qpos, qvel

    def set_target(self, data: mjx.Data, xy: jax.Array) -> mjx.Data:
        """Moves the target to ``xy`` (world frame) at the fingertip's height."""
        pos = jnp.concatenate([jnp.asarray(xy, jnp.float32), jnp.full((1,), self.target_z, jnp.float32)])
        return data.replace(mocap_pos=data.mocap_pos.at[self.target_mocap].set(pos))

    def target(self, data: mjx.Data) -> jax.Array:
        """Target position (3,) in the world frame."""
        return data.xpos[self.target_id]

    def fingertip(self, data: mjx.Data) -> jax.Array:
        """Fingertip position (3,) in the world frame."""
        return data.xpos[self.chain_ids[-1]]

    def chain(self, data: mjx.Data) -> jax.Array:
        """Positions (3, 3) of the base joint, the elbow and the fingertip: the links run between them."""
        return data.xpos[jnp.asarray(self.chain_ids)]

    def observe(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        target = self.target(data)
        return jnp.concatenate([jnp.cos(q), jnp.sin(q), target[:2], v, self.fingertip(data) - target])
