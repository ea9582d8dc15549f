"""Point: a sphere that pushes along its heading and turns with a velocity servo."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import LOCOMOTION, NAVIGATION, Body
from crax.core.mjx import mjx


class Point(Body):
    """Safety-Gym's Point (docs/SPEC.md section 2): slide x, slide y, hinge z; 2 actuators; obs 12.

    Its observation is the site's accelerometer, velocimeter, gyro and magnetometer, computed from
    the joint state rather than by MuJoCo's sensor stage: the site sits on the hinge axis and the
    torso never tilts, so each reading is a planar rotation of a joint quantity (the tests check
    them against MuJoCo's own sensors). The sphere floats 0.1 m up on its slide joints and does not
    collide with the floor, which removes the only per-step floor contact from the physics.

    Velocity suite: no healthy bonus, no control cost (docs/SPEC.md section 3); the speed is the planar
    speed of the torso and base τ = 0.745 m/s, measured as SPEC says (docs/DECISIONS.md).
    """

    name = "Point"
    kinds = frozenset({NAVIGATION, LOCOMOTION})
    asset = "point.xml"
    timestep = 0.02
    frame_skip = 4
    solver_iterations = 1
    ls_iterations = 4
    reset_noise = 0.005
    healthy_z = (0.05, 0.3)
    floor_contact = False
    velocity_threshold = 0.745
    """Half the 1.49 m/s that PPO reached on PointVelocity1 (benchmarks/results/tau_Point.json)."""

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.gravity = tuple(float(g) for g in m.opt.gravity)
        self.magnetic = tuple(float(b) for b in m.opt.magnetic)

    def place(self, qpos: jax.Array, xy: jax.Array, yaw: jax.Array) -> jax.Array:
        return qpos.at[0:2].set(xy).at[2].add(yaw)

    def velocity(self, model: mjx.Model, data: mjx.Data) -> jax.Array:
        v = self.qvel(data)
        return jnp.stack([v[0], v[1], jnp.zeros_like(v[0])])  # the slides run along world x and y

    def observe(self, data: mjx.Data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        acc = data.qacc[slice(*self.qvel_adr)]
        c, s = jnp.cos(q[2]), jnp.sin(q[2])

        def to_site(vec):  # world -> site frame for a rotation about z by yaw
            return jnp.stack([c * vec[0] + s * vec[1], -s * vec[0] + c * vec[1], vec[2]])

        zero = jnp.zeros(())
        g = jnp.asarray(self.gravity)
        accelerometer = to_site(jnp.stack([acc[0], acc[1], zero]) - g)
        velocimeter = to_site(jnp.stack([v[0], v[1], zero]))
        gyro = jnp.stack([zero, zero, v[2]])
        magnetometer = to_site(jnp.asarray(self.magnetic))
        return jnp.concatenate([accelerometer, velocimeter, gyro, magnetometer])
