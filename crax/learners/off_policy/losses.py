"""The off-policy family's loss arithmetic as pure functions: arrays and floats in, arrays out (as Brax's
agents keep ``losses.py``). :class:`~crax.learners.off_policy.family.OffPolicyLearner`, SAC, DDPG and TD3
evaluate the networks and call these; ``tests/learners/test_losses_off_policy.py`` checks each against its
equation (WCSAC's, at the end: ``tests/learners/test_wcsac.py``).

Shapes: a batch of B transitions; the reward Q-values are stacked ``(reward critics, B)`` (one for DDPG,
twins for SAC and TD3), the cost Q-values ``(B, outputs)`` (one output per budgeted term); ``discount`` is
the stored γ^k, 0 after a termination.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.stats import norm

from crax.learners.shared.networks import gaussian_log_prob


def reward_target(reward: jax.Array, discount: jax.Array, next_q: jax.Array, bonus: jax.Array,
                  reward_scaling: float) -> jax.Array:
    """The reward critics' TD target y_r = s·r + d·(min_i Q'_i(s', a') + bonus): the smaller of the twin
    target critics (TD3's and SAC's; DDPG's one), plus what the algorithm adds at the target action (SAC:
    −α log π(a'|s'), else 0); ``discount`` d = 0 after a termination drops the bootstrap."""
    return reward_scaling * reward + discount * (jnp.min(next_q, axis=0) + bonus)


def cost_target(cost: jax.Array, discount: jax.Array, next_q_c: jax.Array) -> jax.Array:
    """The cost critic's TD target y_c = c + d·max(Q'_c(s', μ(s')), 0), one column per output of
    ``next_q_c`` ``(B, outputs)``. Costs are never negative, nor is their discounted sum: a negative Q'_c is
    an error the actor seeks out (it lowers λ·Q_c), and bootstrapping from it would teach it back
    (docs/DECISIONS.md, decision 68)."""
    return cost.reshape(next_q_c.shape) + discount[:, None] * jnp.maximum(next_q_c, 0.0)


def critic_losses(q_r: jax.Array, q_c: jax.Array, y_r: jax.Array, y_c: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The critics' squared TD errors ``(reward, cost)``: mean over the batch of Σ_i (Q_r,i − y_r)² over the
    reward critics ``(critics, B)``, and of Σ_k (Q_c,k − y_c,k)² over the cost outputs ``(B, outputs)``."""
    loss_r = jnp.mean(jnp.sum((q_r - y_r[None]) ** 2, axis=0))
    loss_c = jnp.mean(jnp.sum((q_c - y_c) ** 2, axis=-1))
    return loss_r, loss_c


def soft_value(q_r: jax.Array, alpha: jax.Array, logp: jax.Array) -> jax.Array:
    """SAC's soft value min_i Q_r,i − α log π(a|s) of a sampled action (the reward side of its actor's
    objective)."""
    return jnp.min(q_r, axis=0) - alpha * logp


def objective_loss(objective: jax.Array) -> jax.Array:
    """The actor's loss −mean(objective), ``objective`` the per-sample quantity it maximizes (the rule's mix
    of the reward and cost Q-values)."""
    return -jnp.mean(objective)


def temperature_loss(log_alpha: jax.Array, gap: jax.Array) -> jax.Array:
    """SAC's temperature loss −mean(log α · (log π + target entropy)), ``gap`` the constant in brackets."""
    return -jnp.mean(log_alpha * gap)


def polyak(target: jax.Array, online: jax.Array, tau: float | jax.Array) -> jax.Array:
    """A target network's soft update of one parameter: (1 − τ)·target + τ·online."""
    return (1.0 - tau) * target + tau * online


def smoothed_action(action: jax.Array, noise: jax.Array, target_noise: float, noise_clip: float) -> jax.Array:
    """TD3's target action clip(a + clip(σ·ε, −c, c), −1, 1): ``action`` the target actor's tanh(μ'(s')), ε
    standard Gaussian ``noise``, σ ``target_noise``, c ``noise_clip``."""
    return jnp.clip(action + jnp.clip(target_noise * noise, -noise_clip, noise_clip), -1.0, 1.0)


def tanh_log_det(u: jax.Array) -> jax.Array:
    """Σ log(1 − tanh(u)²) over the last axis, as 2·(log 2 − u − softplus(−2u)): exact where 1 − tanh(u)²
    rounds to 0 in float32 (OmniSafe's ``GaussianSACActor.log_prob``)."""
    return jnp.sum(2.0 * (jnp.log(2.0) - u - jax.nn.softplus(-2.0 * u)), axis=-1)


def squash(loc: jax.Array, scale: jax.Array, noise: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The action ``tanh(u)``, u = loc + scale·noise, and its log-density with the tanh correction."""
    u = loc + scale * noise
    return jnp.tanh(u), gaussian_log_prob(u, loc, scale) - tanh_log_det(u)


# ---- WCSAC's distributional safety critic (Yang et al. 2021) ---------------------------------------------

VARIANCE_FLOOR = 1e-8
"""The smallest variance of the cost return WCSAC's safety critic outputs or regresses to (the authors'
clip): its square root, in the CVaR and the loss, keeps a finite gradient."""


def nonnegative_variance(z: jax.Array) -> jax.Array:
    """The variance head's output from its network's ``z``: max(softplus(z), :data:`VARIANCE_FLOOR`), never
    negative whatever the network says."""
    return jnp.maximum(jax.nn.softplus(z), VARIANCE_FLOOR)


def cvar_coefficient(alpha: float) -> jax.Array:
    """φ(Φ⁻¹(α))/α, φ and Φ the standard normal density and distribution: how many standard deviations
    above its mean the CVaR_α (the mean of the worst α fraction) of a Gaussian lies. 1.7550 at α = 0.1,
    0 at α = 1 (the mean), growing without bound as α → 0."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"the risk level must lie in (0, 1], got {alpha!r}")
    return norm.pdf(norm.ppf(jnp.float32(alpha))) / alpha


def gaussian_cvar(mean: jax.Array, variance: jax.Array, alpha: float) -> jax.Array:
    """WCSAC's safety measure Γ = Q_c + α⁻¹ φ(Φ⁻¹(α)) √V_c: the CVaR_α of a cost return distributed as
    N(Q_c, V_c) (:func:`cvar_coefficient`); ``alpha`` = 1 gives Q_c."""
    return mean + cvar_coefficient(alpha) * jnp.sqrt(variance)


def variance_target(cost: jax.Array, discount: jax.Array, next_q_c: jax.Array, next_v_c: jax.Array,
                    q_c: jax.Array) -> jax.Array:
    """The variance critic's target from the Bellman equation of the cost return's second moment:
    y_v = c² + 2d·c·Q'_c + d²·V'_c + d²·Q'_c² − Q_c(s, a)², floored at :data:`VARIANCE_FLOOR`.

    ``next_q_c`` and ``next_v_c`` ``(B, outputs)`` are the target critics at (s', a'), a' ~ π; Q'_c enters
    as max(Q'_c, 0), as in :func:`cost_target` (so y_v = y_c² + d²·V'_c − Q_c²); ``q_c`` is the online cost
    critic at the batch's (s, a). d = γ^k is the stored discount, 0 after a termination: the bootstrap
    drops and y_v = c² − Q_c(s, a)²."""
    c = cost.reshape(next_q_c.shape)
    d = discount[:, None]
    q_next = jnp.maximum(next_q_c, 0.0)
    second_moment = c**2 + 2.0 * d * c * q_next + d**2 * next_v_c + d**2 * q_next**2
    return jnp.maximum(second_moment - q_c**2, VARIANCE_FLOOR)


def variance_loss(v_c: jax.Array, y_v: jax.Array) -> jax.Array:
    """The variance part of the squared 2-Wasserstein distance between N(·, V_c) and N(·, y_v),
    V_c + y_v − 2√(V_c·y_v) = (√V_c − √y_v)², summed over the outputs ``(B, outputs)`` and averaged over
    the batch (the mean part is the cost critic's squared TD error, :func:`critic_losses`)."""
    return jnp.mean(jnp.sum((jnp.sqrt(v_c) - jnp.sqrt(y_v)) ** 2, axis=-1))
