"""PPO-PID: Lagrangian PPO whose multiplier is an incremental PID controller on the violation."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.multipliers import PIDFields, PIDState, lagrangian_advantage, pid_step


@dataclasses.dataclass(frozen=True)
class PPOPIDConfig(PIDFields, PPOConfig):
    """PPO-PID hyperparameters: the shared PPO fields plus the PID controller's (:class:`PIDFields`)."""


class PPOPID(ConstrainedPPO):
    """As PPO-Lag, with λ ← clip(λ + K_p v + K_i I + K_d D, 0, λ_max) (SPEC §5)."""

    name: ClassVar[str] = "ppo-pid"
    Config: ClassVar[type[PPOConfig]] = PPOPIDConfig
    config: PPOPIDConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)
        self.integral = self.multiplier_init(0.0)
        self.derivative = self.multiplier_init(0.0)
        self.prev_violation = self.multiplier_init(0.0)

    def multiplier_update(self, violation: jax.Array) -> None:
        state = pid_step(PIDState(self.lagrange[...], self.integral[...], self.derivative[...],
                                  self.prev_violation[...]), violation, self.config)
        self.lagrange[...] = state.lagrange
        self.integral[...] = state.integral
        self.derivative[...] = state.derivative
        self.prev_violation[...] = state.prev_violation

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))
