"""P3O: penalized PPO with an exact ReLU penalty on the cost surrogate and a multiplicative κ schedule."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.base import ConstrainedPPO, PolicyBatch, PPOConfig, clipped_surrogate


@dataclasses.dataclass(frozen=True)
class P3OConfig(PPOConfig):
    """P3O hyperparameters: the shared PPO fields plus the κ schedule."""

    kappa_init: float = ranged(0.01, gt=0)
    """Initial and minimum penalty weight κ₀."""
    kappa_factor: float = ranged(1.1, ge=1)
    """κ is multiplied by this factor when v > 0 and divided by it otherwise."""
    kappa_max: float = ranged(50.0, ge="kappa_init")
    """Upper bound κ_max of the penalty weight."""


def cost_surrogate(ratio: jax.Array, adv_c: jax.Array, clip_epsilon: float) -> jax.Array:
    """Pessimistic clipped surrogate of the cost advantage (the larger of the two), mean over the batch;
    one per term when ``adv_c`` has a trailing term axis (per-term budgets)."""
    clipped = jnp.clip(ratio, 1.0 - clip_epsilon, 1.0 + clip_epsilon)
    if adv_c.ndim > ratio.ndim:
        return jnp.mean(jnp.maximum(ratio[..., None] * adv_c, clipped[..., None] * adv_c), axis=0)
    return jnp.mean(jnp.maximum(ratio * adv_c, clipped * adv_c))


class P3O(ConstrainedPPO):
    """Minimizes −L_r + κ · max(0, L_c + v) with L the clipped surrogates; κ grows ×1.1 while v > 0."""

    name: ClassVar[str] = "p3o"
    Config: ClassVar[type[PPOConfig]] = P3OConfig
    config: P3OConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.kappa = self.multiplier_init(self.config.kappa_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        c = self.config
        k = self.kappa[...]
        self.kappa[...] = jnp.where(violation > 0, jnp.minimum(k * c.kappa_factor, c.kappa_max),
                                    jnp.maximum(k / c.kappa_factor, c.kappa_init))

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        eps = self.config.clip_epsilon
        reward_surr = clipped_surrogate(batch.ratio, batch.adv_r, eps)
        penalty = jnp.maximum(0.0, cost_surrogate(batch.ratio, batch.adv_c, eps) + batch.violation)
        return -reward_surr + jnp.sum(self.penalty(self.kappa) * penalty), {"loss/p3o_penalty": jnp.sum(penalty)}
