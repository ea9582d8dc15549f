"""The multiplier rules that every learner family shares, one implementation each: the Lagrangian
rule (``ppo-lag``, ``trpo-lag``, ``cup``, ``sac-lag``, ``td3-lag``: projected gradient ascent, or Adam as
OmniSafe's ``Lagrange`` steps it) and the PID Lagrangian (``ppo-pid``, ``sac-pid``, ``td3-pid``: Stooke et
al.'s positional controller in OmniSafe's ``PIDLagrangian`` form), with the config fields each rule reads
and the Lagrangian mix of a reward quantity and a cost quantity (advantages in the PPO family, Q-values
in the off-policy one).

Three layers: the rules as functions of arrays (:func:`lagrangian_ascent`, :func:`lagrangian_adam`,
:func:`pid_step`); the field groups, frozen dataclasses that a learner's config lists among its bases
(``class PPOLagConfig(LagrangianFields, PPOConfig)``); and the rules as
:class:`~crax.learners.learner.Learner` hooks (:class:`LagrangianRule`, :class:`PIDRule`), which a
learner of any family lists first among its bases (``class SACLag(LagrangianRule, SAC)``). The learner
keeps the :class:`~crax.learners.learner.Multiplier` variables, so their names, logs and checkpoints are
the same in every family.

Every rule is driven by the learner's per-step violation v = ĉ − d/T; the Adam and PID rules take it
as the episode's excess T·v (and the episode cost T·v + d), the units OmniSafe's rules see.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Literal

import jax
import jax.numpy as jnp
import optax

from crax.core.params import ranged
from crax.learners.learner import ControllerState, Learner, Multiplier


def weighted_cost(weights: jax.Array, adv_c: jax.Array, like: jax.Array) -> jax.Array:
    """Σ_k w_k Â_c,k per sample: ``adv_c`` has ``like``'s shape (one cost) or ``like.shape + (K,)``."""
    return jnp.sum(jnp.reshape(weights, (-1,)) * adv_c.reshape(like.shape + (-1,)), axis=-1)


LambdaOptimizer = Literal["sgd", "adam"]
"""How the Lagrangian rule steps λ (``lambda_optimizer``)."""


@dataclasses.dataclass(frozen=True)
class LagrangianFields:
    """The fields of the Lagrangian rule: λ ← clip(λ + η_λ v, 0, λ_max) (``sgd``), or an Adam step on
    −λ·(T·v) (``adam``, OmniSafe's ``Lagrange`` with ``lambda_optimizer: Adam``)."""

    lambda_lr: float = ranged(3.0, gt=0)
    """Step size η_λ: of the ascent λ ← λ + η_λ v (v the per-step violation) with ``sgd``; Adam's
    learning rate with ``adam`` (OmniSafe's PPO-Lag: 0.035)."""
    lambda_init: float = ranged(0.0, ge=0)
    """Initial multiplier λ₀."""
    lambda_optimizer: LambdaOptimizer = "sgd"
    """``sgd``: projected gradient ascent on the per-step violation (crax's rule); ``adam``: torch's Adam
    (β 0.9, 0.999, ε 1e-8) on the loss −λ·(J_c − d) with J_c − d = T·v, as OmniSafe steps it."""
    lambda_max: float | None = ranged(None, gt=0, optional=True)
    """Upper clip of λ (OmniSafe's ``lagrangian_upper_bound``); None: unbounded."""


def lagrangian_ascent(lam: jax.Array, violation: jax.Array, lambda_lr: float,
                      lambda_max: float | None = None) -> jax.Array:
    """One projected gradient-ascent step of the multiplier: clip(λ + η_λ v, 0, λ_max) (per term with budgets)."""
    return jnp.clip(lam + lambda_lr * violation, 0.0, lambda_max)


def lagrangian_adam(lam: jax.Array, state: optax.ScaleByAdamState, excess: jax.Array, lambda_lr: float,
                    lambda_max: float | None = None) -> tuple[jax.Array, optax.ScaleByAdamState]:
    """One Adam step of λ on the loss −λ·e (e = J_c − d, the episode's excess over the bound), then
    clip(·, 0, λ_max): OmniSafe's ``Lagrange.update_lagrange_multiplier`` with torch's Adam."""
    updates, new_state = optax.scale_by_adam(eps=1e-8).update(-excess, state)
    assert isinstance(new_state, optax.ScaleByAdamState)
    return jnp.clip(lam - lambda_lr * jnp.asarray(updates), 0.0, lambda_max), new_state


def lagrangian_advantage(adv_r: jax.Array, adv_c: jax.Array, lam: jax.Array) -> jax.Array:
    """(Â_r − Σ λ_k Â_c,k) / (1 + Σ λ_k): the mixed advantage of the Lagrangian learners (one term: λ scalar)."""
    return (adv_r - weighted_cost(lam, adv_c, adv_r)) / (1.0 + jnp.sum(lam))


@dataclasses.dataclass(frozen=True)
class PIDFields:
    """The fields of the PID Lagrangian (Stooke, Achiam & Abbeel 2020, Algorithm 2, in OmniSafe's
    ``PIDLagrangian`` form; defaults: OmniSafe's CPPO-PID), on the episode cost J and its excess
    e = J − d over the bound."""

    kp: float = ranged(0.1, ge=0)
    """Proportional gain K_p, on the EMA of e."""
    ki: float = ranged(0.01, ge=0)
    """Integral gain K_i: I ← max(0, I + K_i e)."""
    kd: float = ranged(0.01, ge=0)
    """Derivative gain K_d, on the rise of the EMA of J over ``d_delay`` updates (never negative)."""
    d_delay: int = ranged(10, ge=1, integer=True)
    """Updates between the two EMAs of J whose difference is the derivative term."""
    p_ema: float = ranged(0.95, ge=0, lt=1)
    """EMA factor of the proportional term's error: P ← α P + (1 − α) e."""
    d_ema: float = ranged(0.95, ge=0, lt=1)
    """EMA factor of the derivative term's episode cost: D ← α D + (1 − α) J."""
    sum_norm: bool = True
    """OmniSafe's ``sum_norm``: when set (with ``diff_norm`` unset), λ is not clipped at ``lambda_max``."""
    diff_norm: bool = False
    """OmniSafe's ``diff_norm``: I and λ clipped to [0, 1]."""
    lambda_max: float = ranged(100.0, gt=0)
    """Upper clip λ_max of the multiplier (OmniSafe's ``penalty_max``), applied when neither
    ``sum_norm`` nor ``diff_norm`` is set."""
    lambda_init: float = ranged(0.001, ge=0)
    """The integral's initial value I₀ (OmniSafe's ``lagrangian_multiplier_init``); λ itself starts at 0."""

    retired_fields: ClassVar[dict[str, str]] = {
        "integral_max": "crax's incremental PID rule became OmniSafe's positional PID Lagrangian (decision 77)",
        "derivative_ema": "crax's incremental PID rule became OmniSafe's positional PID Lagrangian (decision 77)"}
    """Fields of runs stored before a rule changed, and why they are gone (read by
    ``crax.runs.checkpoint.config_from_dict``)."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PIDState:
    """The PID rule's state: λ, the integral I, the EMAs P (of e) and D (of J), the last ``d_delay``
    values of D by update number modulo ``d_delay`` (0 before written) and the updates taken."""

    lagrange: jax.Array
    integral: jax.Array
    p_ema: jax.Array
    d_ema: jax.Array
    d_history: jax.Array
    updates: jax.Array


def pid_init(shape: tuple[int, ...], gains: PIDFields) -> PIDState:
    """The state before the first update: λ = 0, I = I₀, the EMAs and the history zero."""
    zeros = jnp.zeros(shape, jnp.float32)
    return PIDState(lagrange=zeros, integral=jnp.full(shape, gains.lambda_init, jnp.float32), p_ema=zeros,
                    d_ema=zeros, d_history=jnp.zeros((gains.d_delay, *shape), jnp.float32),
                    updates=jnp.zeros((), jnp.int32))


def pid_step(state: PIDState, episode_cost: jax.Array, bound: jax.Array, gains: PIDFields) -> PIDState:
    """OmniSafe's ``PIDLagrangian.pid_update(J)``: e = J − d; I ← max(0, I + K_i e); P ← α_p P + (1 − α_p) e;
    D ← α_d D + (1 − α_d) J; λ ← max(0, K_p P + I + K_d max(0, D − D_{n−delay})), then its clips."""
    excess = episode_cost - bound
    integral = jnp.maximum(0.0, state.integral + gains.ki * excess)
    if gains.diff_norm:
        integral = jnp.clip(integral, 0.0, 1.0)
    p_ema = gains.p_ema * state.p_ema + (1.0 - gains.p_ema) * excess
    d_ema = gains.d_ema * state.d_ema + (1.0 - gains.d_ema) * episode_cost
    n = state.updates + 1
    slot = n % gains.d_delay
    derivative = jnp.maximum(0.0, d_ema - state.d_history[slot])
    lagrange = jnp.maximum(0.0, gains.kp * p_ema + integral + gains.kd * derivative)
    if gains.diff_norm:
        lagrange = jnp.minimum(lagrange, 1.0)
    if not (gains.diff_norm or gains.sum_norm):
        lagrange = jnp.minimum(lagrange, gains.lambda_max)
    return PIDState(lagrange=lagrange, integral=integral, p_ema=p_ema, d_ema=d_ema,
                    d_history=state.d_history.at[slot].set(d_ema), updates=n)


class LagrangianRule(Learner):
    """The Lagrangian rule as learner hooks (any family): λ (one per budgeted term) starts at
    ``lambda_init`` and steps once per iteration (:func:`lagrangian_ascent` or :func:`lagrangian_adam`);
    :meth:`lagrangian_mix` mixes a reward and a cost quantity as (r − λ c)/(1 + λ). The learner's config
    has :class:`LagrangianFields`."""

    config: LagrangianFields  # type: ignore[assignment]  # with the learner family's own fields

    def init_multipliers(self) -> None:
        self.lagrange = self.multiplier_init(self.config.lambda_init)
        if self.config.lambda_optimizer == "adam":
            self.lambda_adam_mu = ControllerState(jnp.zeros(self.cost_shape, jnp.float32))
            self.lambda_adam_nu = ControllerState(jnp.zeros(self.cost_shape, jnp.float32))
            self.lambda_adam_count = ControllerState(jnp.zeros((), jnp.int32))

    def multiplier_update(self, violation: jax.Array) -> None:
        c = self.config
        if c.lambda_optimizer == "adam":
            state = optax.ScaleByAdamState(count=self.lambda_adam_count[...], mu=self.lambda_adam_mu[...],
                                           nu=self.lambda_adam_nu[...])
            lam, state = lagrangian_adam(self.lagrange[...], state, self.episode_length * violation, c.lambda_lr,
                                         c.lambda_max)
            self.lambda_adam_count[...], self.lambda_adam_mu[...], self.lambda_adam_nu[...] = state.count, state.mu, state.nu
        else:
            lam = lagrangian_ascent(self.lagrange[...], violation, c.lambda_lr, c.lambda_max)
        self.lagrange[...] = lam

    def lagrangian_mix(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        """(r − Σ λ_k c_k)/(1 + Σ λ_k) with λ held constant (:func:`lagrangian_advantage`)."""
        return lagrangian_advantage(reward, cost, self.penalty(self.lagrange))


class PIDRule(LagrangianRule):
    """The PID Lagrangian as learner hooks (any family): :func:`pid_step` once per iteration on the
    episode cost J = T·v + d, λ mixed as the Lagrangian rule mixes it. The learner's config has
    :class:`PIDFields`."""

    config: PIDFields  # type: ignore[assignment]

    def init_multipliers(self) -> None:
        state = pid_init(self.cost_shape, self.config)
        self.lagrange = Multiplier(state.lagrange)
        self.integral = Multiplier(state.integral)
        self.p_ema = Multiplier(state.p_ema)
        self.d_ema = Multiplier(state.d_ema)
        self.d_history = ControllerState(state.d_history)
        self.pid_updates = ControllerState(state.updates)

    def multiplier_update(self, violation: jax.Array) -> None:
        bound = self.bound()
        state = PIDState(self.lagrange[...], self.integral[...], self.p_ema[...], self.d_ema[...],
                         self.d_history[...], self.pid_updates[...])
        state = pid_step(state, self.episode_length * violation + bound, bound, self.config)
        self.lagrange[...] = state.lagrange
        self.integral[...] = state.integral
        self.p_ema[...] = state.p_ema
        self.d_ema[...] = state.d_ema
        self.d_history[...] = state.d_history
        self.pid_updates[...] = state.updates
