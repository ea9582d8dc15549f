"""Cost of an arm over flat zones: each zone that any sample point of the arm lies in costs once."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.context import Context
from crax.core.params import TaskParam
from crax.costs.base import Constraint
from crax.objects.mixed_zones import MixedZones


def sample_chain(chain: jax.Array, samples_per_link: int) -> jax.Array:
    """Points along a chain of links: ``samples_per_link`` evenly spaced per link, from the link's
    start (inclusive) to its end (exclusive), then the chain's end.

    ``chain`` (L + 1, d) holds the link endpoints; returns (L · samples_per_link + 1, d).
    """
    t = jnp.arange(samples_per_link, dtype=chain.dtype)[None, :, None] / samples_per_link
    start, end = chain[:-1, None, :], chain[1:, None, :]
    points = (start + t * (end - start)).reshape(-1, chain.shape[-1])
    return jnp.concatenate([points, chain[-1:]])


class ArmTouch(Constraint):
    """``cost_scale · Σ_i 1[arm ∩ zone_i]`` over the zones of a :class:`MixedZones`.

    The arm is the chain of the named bodies' origins (base joint, elbow, ..., fingertip), sampled
    at ``samples_per_link`` points per link plus the tip (:func:`sample_chain`); a zone counts once
    however many points lie in it. Only the xy plane matters (the zones are flat).
    """

    name = "ArmTouch"

    def __init__(
        self, zones: MixedZones, chain: tuple[str, ...], *, samples_per_link: int = 5, cost_scale: float = 1.0,
        term: str = "zones",
    ):
        if samples_per_link < 1:
            raise ValueError(f"samples_per_link must be >= 1, got {samples_per_link}")
        if len(chain) < 2:
            raise ValueError(f"an arm chain needs at least two bodies (base and tip), got {chain!r}")
        self.zones = zones
        self.chain = tuple(chain)
        self.samples_per_link = samples_per_link
        self.cost_scale = TaskParam(jnp.asarray(cost_scale, jnp.float32))
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        self.chain_ids = tuple(int(m.body(name).id) for name in self.chain)

    def points(self, ctx: Context) -> jax.Array:
        """The arm's sample points (P, 2) on the plane."""
        chain = ctx.data.xpos[np.asarray(self.chain_ids)][:, :2]
        return sample_chain(chain, self.samples_per_link)

    def cost(self, ctx: Context) -> jax.Array:
        touched = jnp.any(self.zones.contains(self.points(ctx), ctx.task[self.zones.label]), axis=1)
        return self.cost_scale[...] * jnp.sum(touched.astype(jnp.float32))
