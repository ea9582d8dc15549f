"""The episodic-cost statistics of crax.learners.shared.risk against their definitions, by hand."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.learners.shared.risk import cvar, exceedance, masked_mean

COSTS = np.array([0.0, 10.0, 30.0, 50.0, 20.0, 40.0, 5.0, 60.0, 25.0, 15.0], np.float32)
"""Ten episodes; sorted worst first: 60, 50, 40, 30, 25, 20, 15, 10, 5, 0."""


def test_exceedance_counts_episodes_strictly_over_the_bound():
    assert float(exceedance(COSTS, 25.0)) == pytest.approx(0.4)  # 30, 40, 50, 60; 25 itself is not over
    assert float(exceedance(COSTS, 100.0)) == 0.0


@pytest.mark.parametrize("alpha, expected", [
    (0.1, 60.0),  # k = 1: the worst episode
    (0.2, 55.0),  # k = 2: (60 + 50) / 2
    (0.25, (60 + 50 + 0.5 * 40) / 2.5),  # k = 2.5: the third worst weighted a half
    (0.05, 60.0),  # k = 0.5 < 1: still the worst
    (1.0, 25.5),  # the mean
])
def test_cvar_is_the_mean_of_the_worst_fraction(alpha, expected):
    assert float(cvar(COSTS, alpha)) == pytest.approx(expected, rel=1e-6)


def test_a_mask_leaves_episodes_out_and_none_flagged_gives_zero():
    mask = np.array([True] * 5 + [False] * 5)  # 0, 10, 30, 50, 20
    assert float(masked_mean(COSTS, mask)) == pytest.approx(22.0)
    assert float(cvar(COSTS, 0.4, mask)) == pytest.approx(40.0)  # k = 2: (50 + 30) / 2
    assert float(exceedance(COSTS, 25.0, mask)) == pytest.approx(0.4)  # 30, 50 of five
    none = np.zeros(10, bool)
    assert float(cvar(COSTS, 0.1, none)) == 0.0 and float(masked_mean(COSTS, none)) == 0.0


def test_per_term_columns_are_reduced_apart_and_the_functions_trace():
    terms = np.stack([COSTS, 2 * COSTS[::-1]], axis=-1)  # (10, 2): a second term twice the first, reordered
    got = jax.jit(lambda c: cvar(c, 0.2))(jnp.asarray(terms))
    np.testing.assert_allclose(np.asarray(got), [55.0, 110.0], rtol=1e-6)
    batched = jax.vmap(lambda c: exceedance(c, 25.0), in_axes=1)(jnp.asarray(terms))
    np.testing.assert_allclose(np.asarray(batched), [0.4, 0.7])  # 2·c > 25 ⇔ c > 12.5: seven of ten


def test_the_cvar_of_a_large_gaussian_sample_is_the_closed_form():
    """CVaR_α of N(μ, σ²) is μ + σ φ(Φ⁻¹(1 − α)) / α; at α = 0.1: μ + 1.7550 σ."""
    sample = np.random.default_rng(0).normal(3.0, 2.0, 400_000).astype(np.float32)
    assert float(cvar(sample, 0.1)) == pytest.approx(3.0 + 2.0 * 1.7550, abs=0.02)


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.5])
def test_alpha_outside_the_unit_interval_is_refused(alpha):
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\]"):
        cvar(COSTS, alpha)
