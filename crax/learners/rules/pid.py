"""The PID Lagrangian (``ppo-pid``, ``cppo-pid``, ``trpo-pid``, ``sac-pid``, ``td3-pid``, ``ddpg-pid``):
Stooke, Achiam & Abbeel's positional controller in OmniSafe's ``PIDLagrangian`` form, on the episode
cost J = T·v + d."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.rules.rule import PenaltyRule
from crax.learners.shared.config import CONSTRAINT_KINDS


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
        "integral_max": "crax's incremental PID rule became OmniSafe's positional PID Lagrangian (docs/DECISIONS.md, decision 77)",
        "derivative_ema": "crax's incremental PID rule became OmniSafe's positional PID Lagrangian (docs/DECISIONS.md, decision 77)"}
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


class PIDRule(PenaltyRule):
    """:func:`pid_step` once per iteration on the episode cost J = T·v + d; λ mixed as the Lagrangian
    rule mixes it."""

    Fields: ClassVar[type[PIDFields]] = PIDFields
    constraint_kinds: ClassVar[tuple[str, ...]] = CONSTRAINT_KINDS
    config: PIDFields
    STATE: ClassVar[dict[str, str]] = {"lagrange": "lagrange", "integral": "integral", "p_ema": "p_ema",
                                       "d_ema": "d_ema", "d_history": "d_history", "updates": "pid_updates"}
    """:class:`PIDState`'s fields -> the variables they are kept under (the names logs and checkpoints use)."""

    def __init__(self, config: PIDFields, cost_shape: tuple[int, ...], episode_length: int):
        super().__init__(config, cost_shape, episode_length)
        self.hold(pid_init(cost_shape, config), self.STATE, logged=("lagrange", "integral", "p_ema", "d_ema"))

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        state = pid_step(self.held(PIDState, self.STATE), self.episode_length * violation + bound, bound, self.config)
        self.store(state, self.STATE)
