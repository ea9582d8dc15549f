"""Statistics of the episodic cost beyond its mean: how often an episode exceeds the bound, and the
mean of its worst tail (CVaR). One implementation for the learners' constraint signals (traced, over a
window of finished episodes with a mask) and for evaluation and the study tables (plain arrays).

Every function reduces axis 0 (the episodes) and keeps the rest (one entry per budgeted cost term);
``mask`` flags the episodes that count (default: all).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def _mask(costs: jax.Array, mask: ArrayLike | None) -> jax.Array:
    if mask is None:
        return jnp.ones(costs.shape, bool)
    mask = jnp.asarray(mask)
    return jnp.broadcast_to(jnp.reshape(mask, mask.shape + (1,) * (costs.ndim - mask.ndim)), costs.shape).astype(bool)


def masked_mean(costs: ArrayLike, mask: ArrayLike | None = None) -> jax.Array:
    """The mean over the flagged episodes (0 when none is)."""
    costs = jnp.asarray(costs)
    m = _mask(costs, mask)
    return jnp.sum(jnp.where(m, costs, 0.0), axis=0) / jnp.maximum(jnp.sum(m, axis=0), 1)


def exceedance(costs: ArrayLike, bound: ArrayLike, mask: ArrayLike | None = None) -> jax.Array:
    """The fraction of the flagged episodes whose cost exceeds ``bound``: P(C > d) estimated."""
    return masked_mean((jnp.asarray(costs) > bound).astype(jnp.float32), mask)


def cvar(costs: ArrayLike, alpha: float, mask: ArrayLike | None = None) -> jax.Array:
    """CVaR_α of the episodic cost: the mean of its worst ``alpha`` fraction (Rockafellar and Uryasev's
    estimator on the flagged episodes: with ``k = α·n`` of ``n`` episodes, the ``⌊k⌋`` largest costs and
    the next one weighted ``k − ⌊k⌋``, over ``k``). ``alpha = 1`` is the mean; small ``alpha`` tends to
    the maximum. 0 when no episode is flagged."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
    costs = jnp.asarray(costs)
    m = _mask(costs, mask)
    ranked = -jnp.sort(jnp.where(m, -costs, jnp.inf), axis=0)  # worst first; unflagged (−inf) last
    k = alpha * jnp.sum(m, axis=0)
    rank = jnp.arange(costs.shape[0], dtype=jnp.float32).reshape((-1,) + (1,) * (costs.ndim - 1))
    weight = jnp.clip(k - rank, 0.0, 1.0)
    return jnp.sum(jnp.where(weight > 0, weight * ranked, 0.0), axis=0) / jnp.maximum(k, 1e-12)


__all__ = ["cvar", "exceedance", "masked_mean"]
