"""The Lagrangian rule (``ppo-lag``, ``trpo-lag``, ``cup``, ``focops``, ``pdo``, ``rcpo``, ``sac-lag``,
``td3-lag``, ``ddpg-lag``, ``wcsac``): λ by projected gradient ascent on the violation, or by Adam as OmniSafe's
``Lagrange`` steps it."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Literal

import jax
import jax.numpy as jnp
import optax

from crax.core.params import ranged
from crax.learners.rules.rule import PenaltyRule
from crax.learners.shared.config import CONSTRAINT_KINDS

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


class LagrangianRule(PenaltyRule):
    """λ (one per budgeted term) starts at ``lambda_init`` and steps once per iteration
    (:func:`lagrangian_ascent`, or :func:`lagrangian_adam` on the episode's excess T·v)."""

    Fields: ClassVar[type[LagrangianFields]] = LagrangianFields
    constraint_kinds: ClassVar[tuple[str, ...]] = CONSTRAINT_KINDS
    config: LagrangianFields
    ADAM: ClassVar[dict[str, str]] = {"mu": "lambda_adam_mu", "nu": "lambda_adam_nu", "count": "lambda_adam_count"}
    """With ``adam``: its state's fields -> the variables they are kept under (checkpointed, not logged)."""

    def __init__(self, config: LagrangianFields, cost_shape: tuple[int, ...], episode_length: int):
        super().__init__(config, cost_shape, episode_length)
        self.lagrange = self.filled(config.lambda_init)
        if config.lambda_optimizer == "adam":
            zeros = jnp.zeros(cost_shape, jnp.float32)
            self.hold(optax.ScaleByAdamState(count=jnp.zeros((), jnp.int32), mu=zeros, nu=zeros), self.ADAM)

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        c = self.config
        if c.lambda_optimizer == "adam":
            lam, state = lagrangian_adam(self.lagrange[...], self.held(optax.ScaleByAdamState, self.ADAM),
                                         self.episode_length * violation, c.lambda_lr, c.lambda_max)
            self.store(state, self.ADAM)
        else:
            lam = lagrangian_ascent(self.lagrange[...], violation, c.lambda_lr, c.lambda_max)
        self.lagrange[...] = lam
