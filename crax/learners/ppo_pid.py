"""PPO-PID (OmniSafe's CPPO-PID): Lagrangian PPO whose multiplier is the positional PID Lagrangian of
Stooke, Achiam & Abbeel (2020) on the episode cost."""

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
    """As PPO-Lag, with λ = max(0, K_p P + I + K_d max(0, D − D_{n−delay})) from the episode cost
    (:func:`~crax.learners.multipliers.pid_step`, OmniSafe's ``PIDLagrangian``)."""

    name: ClassVar[str] = "ppo-pid"
    Config: ClassVar[type[PPOConfig]] = PPOPIDConfig
    config: PPOPIDConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return self.lagrangian_mix(adv_r, adv_c)
