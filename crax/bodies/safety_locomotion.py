"""`SafetyGymLocomotion`: what Safety-Gymnasium 1.0.0's Velocity-v1 agents share (Gymnasium's MuJoCo v4 envs)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.safety_gym import SafetyGymBody
from crax.core.mjx import mjx
from crax.core.scene import no_collision

SELF_COLLISION = 128
"""Collision bit (beside :class:`crax.core.scene.Category`'s) that a self-colliding Safety-Gymnasium
body's geoms carry in both contype and conaffinity of the compiled model, so they collide with each
other, as every geom of Gymnasium's Hopper and Humanoid does (parent and child bodies excepted, as
in MuJoCo)."""


class SafetyGymLocomotion(SafetyGymBody):
    """A Safety-Gymnasium velocity agent: Gymnasium's MuJoCo v4 model, observation, reset and health.

    The MJCF is Gymnasium's own model as Safety-Gymnasium loads it (``tools/safety_gymnasium/sg_velocity_assets.py``);
    its ``<option>`` and floor are this class's attributes: the integrator (every body's, which
    the scene takes) and, applied to crax's scene by :meth:`configure` (the Safety-Gymnasium
    velocity suite calls it), solver, fluid density and viscosity, and the floor's contact parameters (friction, condim, solref, solimp,
    margin), since MuJoCo mixes the floor's with each agent geom's. Actions in [-1, 1] map onto
    the actuators' ``ctrlrange`` (all [-1, 1] but Humanoid's ±0.4); the Gymnasium face declares
    Safety-Gymnasium's action box and rescales.

    Class attributes (besides :class:`~crax.bodies.safety_gym.SafetyGymBody`'s):
      integrator: MuJoCo's integrator (:class:`~crax.bodies.base.Body`'s; Gymnasium v4: RK4,
        HalfCheetah Euler).
      floor: the floor's contact parameters in Safety-Gymnasium's model.
      fluid: (density, viscosity) of the medium (Swimmer's water; 0 elsewhere).
      self_collision: whether the agent's geoms collide with each other (Hopper, Humanoid).
      collides: whether the agent's geoms collide at all (Swimmer: ``collision="predefined"``, no pairs).
      forward_reward_weight: weight of the forward velocity in the reward.
      qvel_noise: ``"uniform"`` (±``reset_noise``) or ``"normal"`` (σ = ``reset_noise``, Ant) at reset.
      obs_skip: how many leading qpos entries the observation leaves out (the x, y position).
      qvel_clip: bound on the observed qvel (Hopper, Walker2d: 10), None: unclipped.
      speed_xy: whether the cost's velocity is the planar speed (Ant, Humanoid) or the x velocity.
    """

    integrator = int(mujoco.mjtIntegrator.mjINT_RK4)
    floor: ClassVar[dict[str, Any]] = {}
    fluid: ClassVar[tuple[float, float]] = (0.0, 0.0)
    self_collision: ClassVar[bool] = False
    collides: ClassVar[bool] = True
    forward_reward_weight: ClassVar[float] = 1.0
    qvel_noise: ClassVar[str] = "uniform"
    obs_skip: ClassVar[int] = 1
    qvel_clip: ClassVar[float | None] = None
    speed_xy: ClassVar[bool] = False

    def mjcf(self) -> mujoco.MjSpec:
        spec = super().mjcf()
        if not self.collides:
            for geom in spec.geoms:
                no_collision(geom)
        return spec

    def configure(self, spec: mujoco.MjSpec) -> None:
        """Gives crax's scene Safety-Gymnasium's options and floor for this agent."""
        spec.option.solver = mujoco.mjtSolver.mjSOL_NEWTON  # Humanoid's PGS: MJX has Newton and CG only
        spec.option.density, spec.option.viscosity = self.fluid
        floor = spec.geom("floor")
        for name, value in self.floor.items():
            setattr(floor, name, value)

    def bind(self, m: mujoco.MjModel) -> None:
        """Besides :meth:`Body.bind`: where :attr:`self_collision`, gives the agent's collidable geoms
        the :data:`SELF_COLLISION` bit in the compiled model (after the scene's category checks,
        before MJX reads the model), so they also collide with each other."""
        super().bind(m)
        agent = [b for b in range(m.nbody) if m.body(b).name.startswith(self.prefix)]
        self.agent_bodies = tuple(agent)
        self.body_mass = tuple(float(m.body_mass[b]) for b in agent)
        if self.self_collision:
            for g in range(m.ngeom):
                if int(m.geom_bodyid[g]) in agent and m.geom_contype[g]:
                    m.geom_contype[g] |= SELF_COLLISION
                    m.geom_conaffinity[g] |= SELF_COLLISION

    def initial_qvel(self, key: jax.Array, nv: int) -> jax.Array:
        """Gymnasium's ``reset_model`` (qpos as :meth:`Body.initial_state` draws it, a free joint's
        quaternion left as drawn: MuJoCo normalises it where it uses it): qvel U(±noise) or
        noise·N(0, 1) (Ant, HalfCheetah)."""
        if self.qvel_noise == "normal":
            return self.reset_noise * jax.random.normal(key, (nv,))
        return super().initial_qvel(key, nv)

    def observe(self, data: mjx.Data) -> jax.Array:
        """Gymnasium v4's ``_get_obs``: qpos without its first ``obs_skip`` entries, then qvel."""
        qvel = self.qvel(data)
        if self.qvel_clip is not None:
            qvel = jnp.clip(qvel, -self.qvel_clip, self.qvel_clip)
        return jnp.concatenate([self.qpos(data)[self.obs_skip:], qvel])

    def planar_point(self, data: mjx.Data) -> jax.Array:
        """(x, y) whose change over a step Safety-Gymnasium divides by ``dt``: the root slide
        joints' coordinates (y 0 for the planar bodies); Ant and Humanoid override it."""
        q = self.qpos(data)
        return q[:2] if self.obs_skip == 2 else jnp.stack([q[0], jnp.zeros_like(q[0])])

    def healthy(self, data: mjx.Data) -> jax.Array:
        return jnp.array(True)


def open_range(x: jax.Array, lo: float = -math.inf, hi: float = math.inf) -> jax.Array:
    """``lo < x < hi``, elementwise: Gymnasium's health tests."""
    return (x > lo) & (x < hi)
