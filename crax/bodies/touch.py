"""MuJoCo's touch sensor computed from MJX's contact list (crax runs MJX without its sensor stage)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.mjx import jax_impl, mjx


def normal_forces(data: mjx.Data, elliptic: bool) -> jax.Array:
    """The normal force of each slot of MJX's contact list, shape (ncon,), from the solver's
    ``efc_force`` (``mj_contactForce``'s first component): the sum of a pyramidal contact's
    2·(condim − 1) edge forces, an elliptic contact's first row; 0 for a slot without rows.
    The rows' addresses are static (MJX fixes the contact list when the model is put)."""
    impl = jax_impl(data)
    contact = impl.contact
    dim, adr = np.asarray(contact.dim), np.asarray(contact.efc_address)
    width = np.ones_like(dim) if elliptic else np.where(dim == 1, 1, 2 * (dim - 1))
    k = np.arange(int(width.max()))
    live = (k[None] < width[:, None]) & (adr[:, None] >= 0)
    rows = impl.efc_force[np.where(live, adr[:, None] + k[None], 0)]
    return jnp.sum(jnp.where(jnp.asarray(live), rows, 0.0), axis=1)


@dataclasses.dataclass(frozen=True)
class TouchSites:
    """MuJoCo's ``touch`` sensors of spherical sites: for each site, the sum of the normal forces of the
    contacts that involve a geom of the site's body and whose ray, from the contact point along its
    normal (pointing away from that body's geom), meets the site's sphere. Built from a compiled model
    (:meth:`of`: static ids and sizes); :meth:`read` computes the readings from data after a forward
    pass, vectorised over sites and contacts (MJX's own touch sensor, ``mjx._src.sensor``, does the same)."""

    site_ids: tuple[int, ...]
    site_body: tuple[int, ...]
    radius: tuple[float, ...]
    geom_body: tuple[int, ...]
    elliptic: bool

    @classmethod
    def of(cls, m: mujoco.MjModel, sites: tuple[str, ...]) -> TouchSites:
        """The named sites of ``m`` (spheres)."""
        ids = [int(m.site(name).id) for name in sites]
        if any(int(m.site_type[i]) != int(mujoco.mjtGeom.mjGEOM_SPHERE) for i in ids):
            raise ValueError(f"touch sites must be spheres: {sites}")
        return cls(site_ids=tuple(ids), site_body=tuple(int(m.site_bodyid[i]) for i in ids),
                   radius=tuple(float(m.site_size[i][0]) for i in ids),
                   geom_body=tuple(int(b) for b in m.geom_bodyid),
                   elliptic=int(m.opt.cone) == int(mujoco.mjtCone.mjCONE_ELLIPTIC))

    def read(self, data: mjx.Data) -> jax.Array:
        """The sites' touch readings, shape (number of sites,)."""
        contact = jax_impl(data).contact
        if contact.dist.shape[0] == 0:
            return jnp.zeros(len(self.site_ids))
        force = normal_forces(data, self.elliptic)
        bodies = jnp.asarray(self.geom_body, jnp.int32)[contact.geom]  # (ncon, 2)
        site_body = jnp.asarray(self.site_body, jnp.int32)[:, None]
        first, second = site_body == bodies[None, :, 0], site_body == bodies[None, :, 1]
        # the ray leaves the contact along the normal (geom 1 -> geom 2), flipped for the second body
        ray = jnp.where(second[..., None], -contact.frame[None, :, 0], contact.frame[None, :, 0])
        offset = contact.pos[None] - data.site_xpos[jnp.asarray(self.site_ids)][:, None]  # (nsite, ncon, 3)
        b = jnp.sum(offset * ray, axis=-1)
        c = jnp.sum(offset * offset, axis=-1) - jnp.square(jnp.asarray(self.radius))[:, None]
        det = b * b - c
        hits = (det >= 0) & (jnp.sqrt(jnp.maximum(det, 0.0)) - b >= 0)  # the sphere's far crossing is ahead
        return jnp.sum(jnp.where((first | second) & hits & (force > 0)[None], force[None], 0.0), axis=1)
