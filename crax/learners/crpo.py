"""CRPO: constraint-rectified policy optimization — PPO on the reward while safe, on the cost otherwise."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.learners.base import ConstrainedPPO, PPOConfig


class CRPO(ConstrainedPPO):
    """Clip surrogate on Â_r when the iteration's violation v ≤ 0, else on −Â_c (no multiplier); with
    per-term budgets, on −Â_c of the most violated term while any term is violated."""

    name: ClassVar[str] = "crpo"
    Config: ClassVar[type[PPOConfig]] = PPOConfig
    supports_budgets: ClassVar[bool] = True

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        v = jnp.reshape(violation, (-1,))
        worst = adv_c.reshape(adv_r.shape + (-1,))[..., jnp.argmax(v)]
        return jnp.where(jnp.max(v) <= 0, adv_r, -worst)
