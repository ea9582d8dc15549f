"""Disk: a navigation body whose MJCF is package data (``disk.xml`` next to this module)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.bodies import NAVIGATION, Body


class Disk(Body):
    """A puck on slide x, slide y and hinge z joints; 2 actuators (thrust along the heading, turn);
    observation 3: velocity along and across its heading, and its yaw rate."""

    name = "Disk"
    kinds = frozenset({NAVIGATION})
    asset = "disk.xml"
    asset_package = "tests.plugin_examples"  # the package holding disk.xml; yours: e.g. "my_robots"
    timestep = 0.02
    frame_skip = 4
    solver_iterations = 1
    ls_iterations = 4
    reset_noise = 0.005
    floor_contact = False  # its sphere floats: Category.AGENT_FLOATING (touches walls, hazards, props)
    healthy_z = None  # it cannot fall over: never terminates early

    def place(self, qpos: jax.Array, xy: jax.Array, yaw: jax.Array) -> jax.Array:
        # root joints slide x, slide y, hinge z: qpos[0:2] is the position, qpos[2] the heading
        return qpos.at[0:2].set(xy).at[2].add(yaw)

    def observe(self, data) -> jax.Array:
        q, v = self.qpos(data), self.qvel(data)
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        return jnp.stack([c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]])
