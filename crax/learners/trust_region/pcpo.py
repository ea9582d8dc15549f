"""PCPO (Yang et al. 2020): a TRPO step on the reward, then its KL projection onto the linearized constraint."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.on_policy.family import IterationBatch, PPOConfig
from crax.learners.trust_region.family import (
    EPS,
    LinearizedConfig,
    PolicySpace,
    TrustRegionPPO,
    cost_checked_step,
    linearize,
    trpo_direction,
)


@dataclasses.dataclass(frozen=True)
class PCPOConfig(LinearizedConfig):
    """PCPO hyperparameters: the trust-region fields (OmniSafe's PCPO tries 200 line-search steps)."""

    backtrack_steps: int = ranged(200, ge=1, integer=True)
    """Line-search tries at most; when none is accepted the actor stays as it was."""


def pcpo_direction(x: jax.Array, p: jax.Array, q: jax.Array, r: jax.Array, s: jax.Array, c: jax.Array,
                   target_kl: float) -> tuple[jax.Array, jax.Array]:
    """The reward step sqrt(2δ/q)·x, then its projection in the KL metric onto c + bᵀΔθ ≤ 0:
    minus max(0, (sqrt(2δ/q)·r + c)/s)·p (x = H⁻¹g, p = H⁻¹b, q = gᵀH⁻¹g, r = gᵀH⁻¹b, s = bᵀH⁻¹b).
    Returns the step and the projection's coefficient (0 when the reward step satisfies the constraint).
    OmniSafe's ``PCPO._update_actor`` takes H·x for x in the reward step (docs/DECISIONS.md, decision 78)."""
    reward_step = trpo_direction(x, q, target_kl)
    alpha = jnp.sqrt(2.0 * target_kl / (q + EPS))
    projection = jnp.maximum((alpha * r + c) / (s + EPS), 0.0)
    return reward_step - projection * p, projection


class PCPO(TrustRegionPPO):
    """Projection-based constrained policy optimization: reward step, KL projection, then a line search
    on KL ≤ δ and the cost surrogate."""

    name: ClassVar[str] = "pcpo"
    Config: ClassVar[type[PPOConfig]] = PCPOConfig
    config: PCPOConfig  # the instance of Config that __init__ stores

    def actor_step(self, space: PolicySpace, batch: IterationBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        lin = linearize(self, space, batch)
        direction, projection = pcpo_direction(lin.x, lin.p, lin.q, lin.r, lin.s, lin.c, self.config.target_kl)
        step, search = cost_checked_step(self, space, lin, direction, check_reward=False)
        return step, {**search, "pcpo/projection": projection}
