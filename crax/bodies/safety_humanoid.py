"""Safety-Gymnasium 1.0.0's Humanoid (``SafetyHumanoidVelocity-v1``: Gymnasium's Humanoid-v4)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.safety_locomotion import SafetyGymLocomotion, open_range
from crax.core import physics
from crax.core.mjx import mjx


class SafetyGymHumanoid(SafetyGymLocomotion):
    """Humanoid as Safety-Gymnasium's velocity task runs it: Gymnasium's ``humanoid.xml`` (17 motors, ctrlrange ±0.4).

    RK4, 0.003 s × 5 = 0.015 s control step; every geom collides with the floor and with the
    others (parent and child excepted). Safety-Gymnasium's model solves contacts with PGS
    (50 iterations), which MJX lacks: crax uses Newton, with the budget of every Safety-Gymnasium
    body (:data:`~crax.bodies.base.SAFETY_GYM_SOLVER`).
    Observation 376 (Gymnasium v4): qpos without root x, y (22), qvel (23), then for the world
    body and the 13 agent bodies ``cinert`` (14 × 10), ``cvel`` (14 × 6), ``qfrc_actuator`` (23)
    and ``cfrc_ext`` (14 × 6, from ``mjx.rne_postconstraint``, as Gymnasium's ``mj_rnePostConstraint``).
    Reset: qpos0 + U(±0.01), qvel U(±0.01). Healthy while the root's z is in (1, 2). Its velocity
    is the centre of mass's (``xipos`` weighted by mass); the cost reads the planar speed.
    Reward: 1.25 · x velocity + 5 − 0.1·‖ctrl‖² (ctrl = the action in actuator units, 0.4 · crax's).
    Velocity-v1 threshold 1.4149 m/s.
    """

    name = "SafetyGymHumanoid"
    agent = "Humanoid"
    asset = "safety_humanoid.xml"
    timestep = 0.003
    frame_skip = 5
    reset_noise = 0.01
    obs_skip = 2
    speed_xy = True
    self_collision = True
    forward_reward_weight = 1.25
    healthy_reward = 5.0
    ctrl_cost = 0.1
    velocity_threshold = 1.4149
    reads_post_constraint = True
    floor = {"friction": [1.0, 0.1, 0.1], "condim": 3, "solref": [0.02, 1.0], "solimp": [0.9, 0.95, 0.001, 0.5, 2.0],
             "margin": 0.001}

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.obs_bodies = (0, *self.agent_bodies)  # the world row first, as in Gymnasium's full-model arrays
        # observe() gets only data, and rne_postconstraint needs the model (its structure only): a
        # partial is a static attribute, so the module stays splittable (as crax.bodies.humanoid does).
        self._post_constraint = functools.partial(physics.post_constraint, mjx.put_model(m, impl="jax"))

    def planar_point(self, data: mjx.Data) -> jax.Array:
        """The agent's centre of mass (``xipos`` weighted by ``body_mass``), x and y."""
        mass = jnp.asarray(self.body_mass, jnp.float32)
        xipos = data.xipos[jnp.asarray(self.agent_bodies)]
        return (mass @ xipos / jnp.sum(mass))[:2]

    def observe(self, data: mjx.Data) -> jax.Array:
        rows = jnp.asarray(self.obs_bodies)
        fields = self._post_constraint(data)
        return jnp.concatenate([
            super().observe(data),
            fields.cinert[rows].ravel(),
            data.cvel[rows].ravel(),
            data.qfrc_actuator[slice(*self.qvel_adr)],
            fields.cfrc_ext[rows].ravel(),
        ])

    def healthy(self, data: mjx.Data) -> jax.Array:
        return open_range(self.qpos(data)[2], 1.0, 2.0)
