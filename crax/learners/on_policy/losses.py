"""The PPO family's loss arithmetic as pure functions: arrays and floats in, arrays out (as Brax's agents
keep ``losses.py``). :class:`~crax.learners.on_policy.family.ConstrainedPPO` and its learners evaluate the
networks and call these; ``tests/learners/test_losses_on_policy.py`` checks each against its equation.

Shapes: ``ratio``, advantages and KLs are per sample ``(B,)``; a cost advantage may carry a trailing
term axis ``(B, K)`` (per-term budgets); Gaussians are ``(loc, scale)`` with the action on the last axis.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from crax.learners.rules.rule import weighted_cost
from crax.learners.shared.networks import gaussian_entropy, gaussian_kl, gaussian_log_prob


def probability_ratio(u: jax.Array, loc: jax.Array, scale: jax.Array, logp: jax.Array) -> jax.Array:
    """ρ = π_θ(u|s)/π_old(u|s) = exp(log π_θ(u|s) − ``logp``), π_θ the Gaussian ``(loc, scale)``."""
    return jnp.exp(gaussian_log_prob(u, loc, scale) - logp)


def surrogate(ratio: jax.Array, adv: jax.Array) -> jax.Array:
    """The unclipped surrogate mean(ρ Â) over the batch (to maximize); one per term when ``adv`` has a
    trailing term axis (per-term budgets)."""
    if adv.ndim > ratio.ndim:
        return jnp.mean(ratio[..., None] * adv, axis=0)
    return jnp.mean(ratio * adv)


def clipped_surrogate(ratio: jax.Array, adv: jax.Array, clip_epsilon: float) -> jax.Array:
    """PPO's pessimistic clipped surrogate (to maximize), mean over the batch of
    min(ρ Â, clip(ρ, 1 − ε, 1 + ε) Â)."""
    clipped = jnp.clip(ratio, 1.0 - clip_epsilon, 1.0 + clip_epsilon)
    return jnp.mean(jnp.minimum(ratio * adv, clipped * adv))


def clip_fraction(ratio: jax.Array, clip_epsilon: float) -> jax.Array:
    """The fraction of samples whose ratio is outside [1 − ε, 1 + ε] (logged as ``policy/clip_fraction``)."""
    return jnp.mean(jnp.abs(ratio - 1.0) > clip_epsilon)


def mean_entropy(scale: jax.Array) -> jax.Array:
    """The Gaussians' entropy (summed over action dimensions), mean over the batch."""
    return jnp.mean(gaussian_entropy(scale))


def mean_kl(loc_p: jax.Array, scale_p: jax.Array, loc_q: jax.Array, scale_q: jax.Array) -> jax.Array:
    """KL(p ‖ q) of diagonal Gaussians (summed over action dimensions), mean over the batch: the measure
    ``target_kl`` stops the PPO family's epochs at."""
    return jnp.mean(gaussian_kl(loc_p, scale_p, loc_q, scale_q))


def value_regression(v_r: jax.Array, v_c: jax.Array, target_r: jax.Array, target_c: jax.Array, coef: float,
                     l2: float = 0.0, params: Any = ()) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The critics' regression loss ``coef · (MSE_r + MSE_c + l2 · Σθ²)`` and its two errors ``(MSE_r, MSE_c)``.

    MSE_r = mean((V_r − target_r)²); MSE_c = mean over samples of Σ_k (V_c,k − target_c,k)² (the cost
    critic's outputs summed; one output: its squared error); Σθ² over the leaves of ``params`` (the
    critics' parameters) only when ``l2`` is non-zero."""
    value_loss_r = jnp.mean((v_r - target_r) ** 2)
    value_loss_c = jnp.mean(jnp.sum(((v_c - target_c) ** 2).reshape(v_c.shape[0], -1), axis=-1))
    loss = value_loss_r + value_loss_c
    if l2:
        loss = loss + l2 * sum(jnp.sum(p**2) for p in jax.tree.leaves(params))
    return coef * loss, value_loss_r, value_loss_c


def combined_loss(policy_loss: jax.Array, value_loss: jax.Array, entropy: jax.Array,
                  entropy_cost: float) -> jax.Array:
    """PPO's minibatch loss: policy loss + value loss − ``entropy_cost`` × entropy."""
    return policy_loss + value_loss - entropy_cost * entropy


def p3o_loss(ratio: jax.Array, adv_r: jax.Array, adv_c: jax.Array, excess: jax.Array, kappa: jax.Array,
             clip_epsilon: float) -> tuple[jax.Array, jax.Array]:
    """P3O's loss −L_r + Σ_k κ_k · max(0, mean(ρ Â_c,k) + excess_k), L_r the clipped reward surrogate and
    ``excess`` the episode's cost over the bound, J_c − d = T·v; also returns Σ_k of the penalty."""
    reward_surr = clipped_surrogate(ratio, adv_r, clip_epsilon)
    penalty = jnp.maximum(0.0, surrogate(ratio, adv_c) + excess)
    return -reward_surr + jnp.sum(kappa * penalty), jnp.sum(penalty)


def focops_loss(kl: jax.Array, ratio: jax.Array, adv: jax.Array, temperature: float,
                delta: float) -> tuple[jax.Array, jax.Array]:
    """Mean over states of ``(KL − ρ Â/λ_f) · 1[KL ≤ δ]`` (Â the mixed advantage); also returns the mask
    (it carries no gradient)."""
    mask = (kl <= delta).astype(kl.dtype)
    per_state = kl - ratio * adv / temperature
    return jnp.mean(per_state * jax.lax.stop_gradient(mask)), mask


def cup_performance_loss(ratio: jax.Array, adv_r: jax.Array, entropy: jax.Array, clip_epsilon: float,
                         entropy_cost: float) -> jax.Array:
    """CUP's performance step: −(clipped surrogate of Â_r) − ``entropy_cost`` × entropy."""
    return -clipped_surrogate(ratio, adv_r, clip_epsilon) - entropy_cost * entropy


def cup_cost_coef(discounting: float, gae_lambda: float) -> float:
    """(1 − γλ_GAE)/(1 − γ), the weight of the cost term in CUP's projection (1e-8 keeps γ = 1 finite)."""
    return (1.0 - discounting * gae_lambda) / (1.0 - discounting + 1e-8)


def cup_projection_loss(ratio: jax.Array, adv_c: jax.Array, kl: jax.Array, lam: jax.Array,
                        coef: float) -> jax.Array:
    """CUP's projection loss mean(coef · ρ · Σ_k λ_k Â_c,k + KL(π_θ ‖ π_perf)) (OmniSafe's
    ``CUP._loss_pi_cost``), ``coef`` from :func:`cup_cost_coef`."""
    return jnp.mean(coef * ratio * weighted_cost(lam, adv_c, ratio) + kl)
