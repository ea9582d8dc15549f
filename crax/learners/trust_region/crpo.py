"""CRPO (Xu, Liang & Lan 2021), as OmniSafe's ``OnCRPO``: a TRPO step on the reward while the episode
cost is within a tolerance of the bound, on the cost otherwise."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class CRPOConfig(TrustRegionConfig):
    """CRPO hyperparameters: the trust-region fields (OmniSafe's ``OnCRPO.yaml``: TRPO's) plus the tolerance."""

    distance: float = ranged(2.0, ge=0)
    """Tolerance η over the bound, in episode cost: the step follows the reward while the episode cost
    is at most d + η (OmniSafe's ``algo_cfgs.distance``, 2 in ``OnCRPO.yaml``)."""

    stored_defaults: ClassVar[dict[str, object]] = {**TrustRegionConfig.stored_defaults, "distance": 0.0}
    """What a run stored before the field existed ran with: no tolerance (crax's CRPO before docs/DECISIONS.md, decision 78
    switched at the bound itself, and took PPO's clipped step)."""


class CRPO(TrustRegionPPO, name="crpo", config=CRPOConfig, budgets=True):
    """TRPO step on Â_r while the episode's excess T·v ≤ ``distance``, else on −Â_c (no multiplier);
    with per-term budgets, on −Â_c of the most violated term while any term is past the tolerance."""

    config: CRPOConfig  # the instance of Config that __init__ stores

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        v = jnp.reshape(violation, (-1,))
        worst = adv_c.reshape(adv_r.shape + (-1,))[..., jnp.argmax(v)]
        return jnp.where(self.episode_length * jnp.max(v) <= self.config.distance, adv_r, -worst)
