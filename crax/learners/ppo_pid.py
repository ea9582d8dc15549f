"""PPO-PID: Lagrangian PPO whose multiplier is an incremental PID controller on the violation."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.ppo_lag import lagrangian_advantage


@dataclasses.dataclass(frozen=True)
class PPOPIDConfig(PPOConfig):
    """PPO-PID hyperparameters: the shared PPO fields plus the PID controller's."""

    kp: float = ranged(10.0, ge=0)
    """Proportional gain K_p."""
    ki: float = ranged(0.01, ge=0)
    """Integral gain K_i."""
    kd: float = ranged(0.01, ge=0)
    """Derivative gain K_d."""
    integral_max: float = ranged(1.0, ge=0)
    """Clip I_max of the integral term: I ← clip(I + v, 0, I_max)."""
    lambda_max: float = ranged(1e6, ge="lambda_init", gt=0)
    """Upper clip λ_max of the multiplier."""
    derivative_ema: float = ranged(0.95, ge=0, lt=1)
    """EMA factor β of the derivative: D ← β D + (1 − β)(v − v_prev)."""
    lambda_init: float = ranged(0.0, ge=0)
    """Initial multiplier λ₀."""


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
        c = self.config
        self.integral[...] = jnp.clip(self.integral[...] + violation, 0.0, c.integral_max)
        self.derivative[...] = (c.derivative_ema * self.derivative[...]
                                + (1.0 - c.derivative_ema) * (violation - self.prev_violation[...]))
        self.prev_violation[...] = violation
        step = c.kp * violation + c.ki * self.integral[...] + c.kd * self.derivative[...]
        self.lagrange[...] = jnp.clip(self.lagrange[...] + step, 0.0, c.lambda_max)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.lagrange))
