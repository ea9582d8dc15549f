"""Humanoid: Gymnasium's 3D biped with arms, its 376-float observation and centre-of-mass speed."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import LOCOMOTION, NAVIGATION
from crax.bodies.free import FreeBody
from crax.core import physics
from crax.core.mjx import mjx


class Humanoid(FreeBody):
    """Humanoid (docs/SPEC.md section 2): 17 motors (ctrlrange ±0.4, Gymnasium's gears), obs 376.

    The observation is Gymnasium's v4 layout: qpos without root x, y (22), qvel (23), then for the
    world body and the 13 agent bodies ``cinert`` (14 × 10), ``cvel`` (14 × 6), the agent's
    ``qfrc_actuator`` (23) and ``cfrc_ext`` (14 × 6). The rows are picked by body id, so bodies a
    suite adds to the scene (mocap hazards, props) never enter it. ``cfrc_ext`` (contact forces on
    each body, in its subtree-com frame) is not filled by MJX's JAX ``mjx.step``; :meth:`observe`
    computes it with ``mjx.rne_postconstraint`` from the step's contacts and constraint forces (on
    ``physics="warp"`` the step computes it: :func:`crax.core.physics.post_constraint`).

    Healthy while the torso is 1.0 to 2.0 m up. Its locomotion speed is that of the centre of mass
    (:meth:`locomotion_position`). Velocity suite: healthy bonus 5.0, control cost 0.1,
    base τ = 1.41 m/s.

    Only the two foot spheres collide (floor, walls, pillars, props). With the torso at least 1 m up
    and the feet above the floor, no other geom can reach the floor (the lowest, a shin, stays
    3.5 cm above it over every joint configuration and orientation), so while healthy the feet
    are the only possible floor contacts, and a fall ends the episode before anything else lands.
    Physics: timestep 0.003 × 5 (Gymnasium's, Euler instead of RK4) and a Newton solve of
    ``solver_iterations=2``, ``ls_iterations=4``: over random-action motion from a standing start
    that stays within 1 cm (torso height, centre of mass) of a converged 16-iteration solve while
    healthy, where one iteration drifts 13 cm; penetration and peak speeds equal the converged
    solve's.
    """

    name = "Humanoid"
    kinds = frozenset({NAVIGATION, LOCOMOTION})
    asset = "humanoid.xml"
    timestep = 0.003
    frame_skip = 5
    solver_iterations = 2
    ls_iterations = 4
    reset_noise = 0.01
    healthy_z = (1.0, 2.0)
    healthy_reward = 5.0
    ctrl_cost = 0.1
    velocity_threshold = 1.41
    reads_post_constraint = True

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        agent = [b for b in range(m.nbody) if m.body(b).name.startswith(self.prefix)]
        self.obs_bodies = (0, *agent)  # the world row first, as in Gymnasium's full-model arrays
        # observe() gets only data, and rne_postconstraint needs the model; a partial is a static
        # (non-pytree) attribute, so the module stays splittable. cfrc_ext reads only the model's
        # structure (body tree, geom owners, cone type), which changing model parameters leaves alone.
        self._post_constraint = functools.partial(physics.post_constraint, mjx.put_model(m, impl="jax"))

    def locomotion_position(self, data: mjx.Data) -> jax.Array:
        """Centre of mass of the agent: the torso is its root, so its subtree com is the whole body's."""
        return data.subtree_com[self.torso_id]

    def observe(self, data: mjx.Data) -> jax.Array:
        rows = jnp.asarray(self.obs_bodies)
        fields = self._post_constraint(data)
        return jnp.concatenate([
            self.qpos(data)[2:],
            self.qvel(data),
            fields.cinert[rows].ravel(),
            data.cvel[rows].ravel(),
            data.qfrc_actuator[slice(*self.qvel_adr)],
            fields.cfrc_ext[rows].ravel(),
        ])
