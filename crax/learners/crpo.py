"""CRPO: constraint-rectified policy optimization — PPO on the reward while safe, on the cost otherwise."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.learners.base import ConstrainedPPO, PPOConfig


class CRPO(ConstrainedPPO):
    """Clip surrogate on Â_r when the iteration's violation v ≤ 0, else on −Â_c (no multiplier)."""

    name: ClassVar[str] = "crpo"
    Config: ClassVar[type[PPOConfig]] = PPOConfig

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return jnp.where(violation <= 0, adv_r, -adv_c)
