"""Proprioceptive sensors on a site: accelerometer, velocimeter, gyro, magnetometer.

They read MuJoCo's kinematic quantities (``site_xmat``, ``cvel``, ``subtree_com``) and give the
same values as MuJoCo's own sensors of the same names, so a body from a plugin can assemble its
observation without MJCF sensors (crax runs MJX with the sensor stage disabled).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.context import Context
from crax.core.mjx import jax_impl, mjx
from crax.sensors.base import Sensor


class _SiteSensor(Sensor):
    size = 3

    def __init__(self, site: str = "agent/torso"):
        self.site = site

    def bind(self, m: mujoco.MjModel) -> None:
        site = m.site(self.site)
        self.site_id = int(site.id)
        self.body_id = int(site.bodyid[0])
        self.root_id = int(m.body_rootid[self.body_id])
        self.gravity = tuple(float(g) for g in m.opt.gravity)
        self.magnetic = tuple(float(b) for b in m.opt.magnetic)

    def _to_site(self, data: mjx.Data, vec: jax.Array) -> jax.Array:
        return data.site_xmat[self.site_id].T @ vec

    def _velocity(self, data: mjx.Data) -> tuple[jax.Array, jax.Array]:
        """Angular and linear velocity of the site's point, world frame."""
        cvel = data.cvel[self.body_id]
        offset = data.site_xpos[self.site_id] - data.subtree_com[self.root_id]
        return cvel[:3], cvel[3:] + jnp.cross(cvel[:3], offset)


class Velocimeter(_SiteSensor):
    """Linear velocity of the site in the site frame."""

    name = "Velocimeter"

    def observe(self, ctx: Context) -> jax.Array:
        return self._to_site(ctx.data, self._velocity(ctx.data)[1])


class Gyro(_SiteSensor):
    """Angular velocity of the site in the site frame."""

    name = "Gyro"

    def observe(self, ctx: Context) -> jax.Array:
        return self._to_site(ctx.data, self._velocity(ctx.data)[0])


class Magnetometer(_SiteSensor):
    """The model's magnetic field in the site frame."""

    name = "Magnetometer"

    def observe(self, ctx: Context) -> jax.Array:
        return self._to_site(ctx.data, jnp.asarray(self.magnetic))


class Accelerometer(_SiteSensor):
    """Linear acceleration minus gravity at the site, in the site frame.

    Needs body accelerations, which MJX computes in ``rne_postconstraint``; that pass is run here,
    only for bodies that carry an accelerometer in their observation.
    """

    name = "Accelerometer"

    def observe(self, ctx: Context) -> jax.Array:
        data = mjx.rne_postconstraint(ctx.model, ctx.data)
        cacc = jax_impl(data).cacc[self.body_id]
        ang, lin = self._velocity(data)
        offset = data.site_xpos[self.site_id] - data.subtree_com[self.root_id]
        acc = cacc[3:] + jnp.cross(cacc[:3], offset) + jnp.cross(ang, lin)
        return self._to_site(data, acc)
