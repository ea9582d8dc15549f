"""The multiplier rules that every learner family shares, one implementation each: the Lagrangian
gradient ascent (``ppo-lag``, ``trpo-lag``, ``cup``, ``sac-lag``, ``td3-lag``) and the incremental PID
controller (``ppo-pid``, ``sac-pid``, ``td3-pid``), with the config fields each rule reads and the
Lagrangian mix of a reward quantity and a cost quantity (advantages in the PPO family, Q-values in
the off-policy one).

Three layers: the rules as functions of arrays (:func:`lagrangian_ascent`, :func:`pid_step`); the
field groups, frozen dataclasses that a learner's config lists among its bases (``class
PPOLagConfig(LagrangianFields, PPOConfig)``); and the rules as :class:`~crax.learners.learner.Learner`
hooks (:class:`LagrangianRule`, :class:`PIDRule`), which a learner of any family lists first among
its bases (``class SACLag(LagrangianRule, SAC)``). The learner keeps the
:class:`~crax.learners.learner.Multiplier` variables, so their names, logs and checkpoints are the
same in every family.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.learner import Learner


def weighted_cost(weights: jax.Array, adv_c: jax.Array, like: jax.Array) -> jax.Array:
    """Σ_k w_k Â_c,k per sample: ``adv_c`` has ``like``'s shape (one cost) or ``like.shape + (K,)``."""
    return jnp.sum(jnp.reshape(weights, (-1,)) * adv_c.reshape(like.shape + (-1,)), axis=-1)


@dataclasses.dataclass(frozen=True)
class LagrangianFields:
    """The fields of the Lagrangian rule λ ← max(0, λ + η_λ v)."""

    lambda_lr: float = ranged(3.0, gt=0)
    """Step size η_λ of the ascent λ ← max(0, λ + η_λ v), v the per-step violation."""
    lambda_init: float = ranged(0.0, ge=0)
    """Initial multiplier λ₀."""


def lagrangian_ascent(lam: jax.Array, violation: jax.Array, lambda_lr: float) -> jax.Array:
    """One projected gradient-ascent step of the multiplier: max(0, λ + η_λ v) (per term with budgets)."""
    return jnp.maximum(0.0, lam + lambda_lr * violation)


def lagrangian_advantage(adv_r: jax.Array, adv_c: jax.Array, lam: jax.Array) -> jax.Array:
    """(Â_r − Σ λ_k Â_c,k) / (1 + Σ λ_k): the mixed advantage of the Lagrangian learners (one term: λ scalar)."""
    return (adv_r - weighted_cost(lam, adv_c, adv_r)) / (1.0 + jnp.sum(lam))


@dataclasses.dataclass(frozen=True)
class PIDFields:
    """The fields of the incremental PID rule on the violation."""

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


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PIDState:
    """The PID rule's state: the multiplier λ, the clipped integral I, the EMA derivative D and the last v."""

    lagrange: jax.Array
    integral: jax.Array
    derivative: jax.Array
    prev_violation: jax.Array


def pid_step(state: PIDState, violation: jax.Array, gains: PIDFields) -> PIDState:
    """I ← clip(I + v, 0, I_max); D ← β D + (1 − β)(v − v_prev); λ ← clip(λ + K_p v + K_i I + K_d D, 0, λ_max)."""
    integral = jnp.clip(state.integral + violation, 0.0, gains.integral_max)
    derivative = (gains.derivative_ema * state.derivative
                  + (1.0 - gains.derivative_ema) * (violation - state.prev_violation))
    step = gains.kp * violation + gains.ki * integral + gains.kd * derivative
    lagrange = jnp.clip(state.lagrange + step, 0.0, gains.lambda_max)
    return PIDState(lagrange=lagrange, integral=integral, derivative=derivative, prev_violation=violation)


class LagrangianRule(Learner):
    """The Lagrangian rule as learner hooks (any family): λ (one per budgeted term) starts at
    ``lambda_init`` and steps λ ← max(0, λ + η_λ v) once per iteration; :meth:`lagrangian_mix`
    mixes a reward and a cost quantity as (r − λ c)/(1 + λ). The learner's config has
    :class:`LagrangianFields`."""

    config: LagrangianFields  # type: ignore[assignment]  # with the learner family's own fields

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)

    def multiplier_update(self, violation: jax.Array) -> None:
        self.lagrange[...] = lagrangian_ascent(self.lagrange[...], violation, self.config.lambda_lr)

    def lagrangian_mix(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        """(r − Σ λ_k c_k)/(1 + Σ λ_k) with λ held constant (:func:`lagrangian_advantage`)."""
        return lagrangian_advantage(reward, cost, self.penalty(self.lagrange))


class PIDRule(LagrangianRule):
    """The PID rule as learner hooks (any family): λ ← clip(λ + K_p v + K_i I + K_d D, 0, λ_max) once
    per iteration (:func:`pid_step`), mixed as the Lagrangian rule mixes it. The learner's config has
    :class:`PIDFields`."""

    config: PIDFields  # type: ignore[assignment]

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
