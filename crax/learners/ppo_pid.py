"""PPO-PID: Lagrangian PPO whose multiplier is an incremental PID controller on the violation."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.multipliers import PIDFields, PIDRule


@dataclasses.dataclass(frozen=True)
class PPOPIDConfig(PIDFields, PPOConfig):
    """PPO-PID hyperparameters: the shared PPO fields plus the PID controller's (:class:`PIDFields`)."""


class PPOPID(PIDRule, ConstrainedPPO):
    """As PPO-Lag, with λ ← clip(λ + K_p v + K_i I + K_d D, 0, λ_max) (SPEC §5)."""

    name: ClassVar[str] = "ppo-pid"
    Config: ClassVar[type[PPOConfig]] = PPOPIDConfig
    config: PPOPIDConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return self.lagrangian_mix(adv_r, adv_c)
