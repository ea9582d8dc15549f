"""The PPO family's pure loss functions (``crax/learners/on_policy/losses.py``) against their equations on
small hand-made arrays (the learners' use of them, and OmniSafe's numbers, are tested in test_hooks.py and
test_omnisafe_on_policy.py)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.learners.on_policy.losses import (
    clip_fraction,
    clipped_surrogate,
    combined_loss,
    cup_cost_coef,
    cup_performance_loss,
    cup_projection_loss,
    focops_loss,
    mean_entropy,
    mean_kl,
    p3o_loss,
    probability_ratio,
    surrogate,
    value_regression,
)

LOG_2PI = math.log(2 * math.pi)

# the clipped surrogate's four regions at ε = 0.2: ratios below, inside and above [0.8, 1.2], with a positive
# and with a negative advantage
EPSILON = 0.2
RATIO = jnp.asarray([0.5, 1.1, 1.5, 0.5, 1.1, 1.5])
ADV = jnp.asarray([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])


def f32(x) -> jax.Array:
    return jnp.asarray(x, jnp.float32)


def test_probability_ratio_is_exp_of_the_log_density_minus_the_rollouts():
    u, loc, scale = f32([[0.5, -1.0]]), f32([[0.0, 0.0]]), f32([[1.0, 2.0]])
    log_density = -0.5 * (0.5**2 + 0.5**2) - math.log(2.0) - LOG_2PI  # two dims: z = 0.5, z = −0.5
    logp = f32([log_density - math.log(3.0)])  # the rollout's policy gave u a third of the density
    assert float(probability_ratio(u, loc, scale, logp)[0]) == pytest.approx(3.0, rel=1e-5)
    assert float(probability_ratio(u, loc, scale, f32([log_density]))[0]) == pytest.approx(1.0, rel=1e-6)


def test_surrogate_is_the_mean_of_ratio_times_advantage_one_per_term():
    ratio = f32([1.0, 2.0])
    assert float(surrogate(ratio, f32([3.0, -1.0]))) == pytest.approx((3.0 - 2.0) / 2)
    # a trailing term axis: one surrogate per budgeted term
    per_term = surrogate(ratio, f32([[3.0, 1.0], [-1.0, 4.0]]))
    np.testing.assert_allclose(per_term, [(3.0 - 2.0) / 2, (1.0 + 8.0) / 2])


def test_clipped_surrogate_takes_the_pessimistic_term_in_each_region():
    # per sample min(ρÂ, clip(ρ)Â): 0.5 (unclipped), 1.1, 1.2 (clipped), −0.8 (clipped), −1.1, −1.5 (unclipped)
    want = np.mean([0.5, 1.1, 1.2, -0.8, -1.1, -1.5])
    assert float(clipped_surrogate(RATIO, ADV, EPSILON)) == pytest.approx(want, rel=1e-6)
    # where the clipped term is the smaller, the ratio gets no gradient
    grad = jax.grad(lambda r: clipped_surrogate(r, ADV, EPSILON))(RATIO)
    np.testing.assert_allclose(grad, np.asarray([1.0, 1.0, 0.0, 0.0, -1.0, -1.0]) / 6, rtol=1e-6)
    # inside the clip range it is the plain surrogate
    inside = f32([0.9, 1.0, 1.15])
    assert float(clipped_surrogate(inside, f32([2.0, -1.0, 3.0]), EPSILON)) == pytest.approx(
        float(surrogate(inside, f32([2.0, -1.0, 3.0]))), rel=1e-6)


def test_clip_fraction_counts_the_ratios_outside_the_clip_range():
    assert float(clip_fraction(RATIO, EPSILON)) == pytest.approx(4 / 6)
    assert float(clip_fraction(f32([0.8, 1.0, 1.2]), 0.25)) == 0.0


def test_mean_entropy_and_mean_kl_of_diagonal_gaussians():
    scale = f32([[1.0, 2.0], [0.5, 0.5]])
    per_state = [math.log(2.0) + 1.0 + LOG_2PI, 2 * math.log(0.5) + 1.0 + LOG_2PI]  # Σ log σ + ½(1 + log 2π)
    assert float(mean_entropy(scale)) == pytest.approx(np.mean(per_state), rel=1e-6)
    # KL(N(0, 1) ‖ N(1, 2)) = log 2 + (1 + 1)/(2·4) − ½ per dimension; KL of a Gaussian to itself is 0
    loc_p, scale_p = f32([[0.0, 0.0], [1.0, 1.0]]), f32([[1.0, 1.0], [2.0, 2.0]])
    loc_q, scale_q = f32([[1.0, 1.0], [1.0, 1.0]]), f32([[2.0, 2.0], [2.0, 2.0]])
    one = math.log(2.0) + 2.0 / 8.0 - 0.5
    assert float(mean_kl(loc_p, scale_p, loc_q, scale_q)) == pytest.approx((2 * one + 0.0) / 2, rel=1e-5)


def test_value_regression_weighs_both_critics_and_the_l2_penalty():
    v_r, target_r = f32([1.0, 2.0]), f32([0.0, 4.0])  # MSE_r = (1 + 4)/2
    v_c, target_c = f32([[1.0, 0.0], [0.0, 0.0]]), f32([[0.0, 2.0], [3.0, 0.0]])  # Σ_k per sample: 5, 9
    params = {"w": f32([1.0, 2.0]), "b": f32([[3.0]])}  # Σθ² = 14
    loss, mse_r, mse_c = value_regression(v_r, v_c, target_r, target_c, 0.25, 0.1, params)
    assert (float(mse_r), float(mse_c)) == pytest.approx((2.5, 7.0))
    assert float(loss) == pytest.approx(0.25 * (2.5 + 7.0 + 0.1 * 14.0), rel=1e-6)
    # without l2 the parameters are not read; a one-output cost critic is its plain MSE
    loss, _, mse_c = value_regression(v_r, f32([1.0, 0.0]), target_r, f32([0.0, 3.0]), 0.5)
    assert float(mse_c) == pytest.approx(5.0) and float(loss) == pytest.approx(0.5 * (2.5 + 5.0))


def test_combined_loss_subtracts_the_entropy_bonus():
    assert float(combined_loss(f32(1.0), f32(2.0), f32(4.0), 0.5)) == pytest.approx(1.0)


def test_p3o_loss_adds_a_relu_penalty_per_term():
    ratio, adv_r = f32([1.5, 0.5]), f32([1.0, -1.0])
    adv_c = f32([[1.0, -1.0], [1.0, -1.0]])  # two terms: cost surrogates mean(ρ Â_c) = 1 and −1
    excess, kappa = f32([0.1, 0.5]), f32([2.0, 3.0])  # term 1: 1 + 0.1 > 0; term 2: −1 + 0.5 < 0 (inactive)
    reward_surr = np.mean([1.2 * 1.0, 0.8 * -1.0])  # clipped at ε = 0.2
    loss, penalty = p3o_loss(ratio, adv_r, adv_c, excess, kappa, 0.2)
    assert float(penalty) == pytest.approx(1.1, rel=1e-6)
    assert float(loss) == pytest.approx(-reward_surr + 2.0 * 1.1, rel=1e-6)
    # one summed cost, far under the bound: no penalty
    loss, penalty = p3o_loss(ratio, adv_r, f32([1.0, 1.0]), f32(-5.0), f32(2.0), 0.2)
    assert float(penalty) == 0.0 and float(loss) == pytest.approx(-reward_surr, rel=1e-6)


def test_focops_loss_masks_the_states_outside_the_trust_region():
    kl = f32([0.0, 0.01, 0.05])
    ratio = f32([1.0, 1.2, 0.9])
    adv = f32([1.0, 2.0, 3.0])
    loss, mask = focops_loss(kl, ratio, adv, 1.5, 0.02)
    np.testing.assert_array_equal(mask, [1.0, 1.0, 0.0])
    per_state = np.asarray(kl) - np.asarray(ratio) * np.asarray(adv) / 1.5
    assert float(loss) == pytest.approx(np.mean(per_state * [1, 1, 0]), rel=1e-5)
    # the masked state contributes no gradient, through the ratio or through its KL
    grad = jax.grad(lambda r: focops_loss(kl, r, adv, 1.5, 0.02)[0])(ratio)
    np.testing.assert_allclose(grad, [-1.0 / 1.5 / 3, -2.0 / 1.5 / 3, 0.0], rtol=1e-6)
    kl_grad = jax.grad(lambda k: focops_loss(k, ratio, adv, 1.5, 0.02)[0])(kl)
    np.testing.assert_allclose(kl_grad, [1 / 3, 1 / 3, 0.0], rtol=1e-6)


def test_cup_losses():
    ratio, adv_r = f32([1.5, 0.5]), f32([1.0, -1.0])
    want = -np.mean([1.2 * 1.0, 0.8 * -1.0]) - 0.01 * 3.0
    assert float(cup_performance_loss(ratio, adv_r, f32(3.0), 0.2, 0.01)) == pytest.approx(want, rel=1e-6)
    assert cup_cost_coef(0.99, 0.95) == pytest.approx((1 - 0.99 * 0.95) / 0.01, rel=1e-5)
    assert cup_cost_coef(1.0, 0.0) == pytest.approx(1e8)  # γ = 1 stays finite
    # mean(coef · ρ · Σ_k λ_k Â_c,k + KL), one cost and two budgeted terms
    kl = f32([0.1, 0.3])
    one = cup_projection_loss(ratio, f32([2.0, -4.0]), kl, f32(0.5), 2.0)
    assert float(one) == pytest.approx(np.mean([2 * 1.5 * 0.5 * 2.0 + 0.1, 2 * 0.5 * 0.5 * -4.0 + 0.3]), rel=1e-6)
    terms = cup_projection_loss(ratio, f32([[2.0, 1.0], [-4.0, 0.0]]), kl, f32([0.5, 2.0]), 2.0)
    assert float(terms) == pytest.approx(np.mean([2 * 1.5 * (1.0 + 2.0) + 0.1, 2 * 0.5 * -2.0 + 0.3]), rel=1e-6)
