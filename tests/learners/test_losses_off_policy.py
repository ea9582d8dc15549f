"""The off-policy family's pure loss functions (``crax/learners/off_policy/losses.py``) against their
equations on small hand-made arrays (the learners' targets and losses through their networks, and OmniSafe's
numbers, are tested in test_off_policy.py and test_omnisafe_off_policy.py)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.learners.off_policy.losses import (
    cost_target,
    critic_losses,
    objective_loss,
    polyak,
    reward_target,
    smoothed_action,
    soft_value,
    squash,
    tanh_log_det,
    temperature_loss,
)


def f32(x) -> jax.Array:
    return jnp.asarray(x, jnp.float32)


def test_reward_target_bootstraps_from_the_smaller_twin_plus_the_bonus():
    reward, discount = f32([1.0, 2.0, 3.0]), f32([0.9, 0.0, 0.5])  # the second transition ended its episode
    next_q = f32([[10.0, 4.0, -2.0], [8.0, 6.0, -3.0]])  # twins: min 8, 4, −3
    bonus = f32([0.5, 0.5, 1.0])  # SAC's −α log π(a'|s')
    y = reward_target(reward, discount, next_q, bonus, 2.0)
    np.testing.assert_allclose(y, [2.0 + 0.9 * 8.5, 4.0, 6.0 + 0.5 * -2.0], rtol=1e-6)  # done: s·r alone
    # one critic (DDPG) and no bonus: r + d·Q'
    np.testing.assert_allclose(reward_target(reward, discount, next_q[:1], jnp.zeros(3), 1.0),
                               [1.0 + 9.0, 2.0, 3.0 - 1.0], rtol=1e-6)


def test_cost_target_never_bootstraps_from_a_negative_value_nor_past_a_termination():
    cost, discount = f32([0.0, 1.0, 1.0]), f32([0.5, 0.5, 0.0])
    next_q_c = f32([[2.0], [-3.0], [4.0]])
    np.testing.assert_allclose(cost_target(cost, discount, next_q_c), [[1.0], [1.0], [1.0]])
    # per budgeted term: one column each
    cost2, next2 = f32([[1.0, 0.0], [0.0, 2.0]]), f32([[2.0, -1.0], [-1.0, 4.0]])
    np.testing.assert_allclose(cost_target(cost2, f32([0.5, 1.0]), next2), [[2.0, 0.0], [0.0, 6.0]])


def test_critic_losses_sum_the_twins_and_the_cost_outputs_per_sample():
    q_r = f32([[1.0, 2.0], [3.0, 2.0]])  # (twins, B)
    y_r = f32([1.0, 4.0])  # errors: twin 1: 0, −2; twin 2: 2, −2 → per sample 4, 8
    q_c, y_c = f32([[1.0, 1.0], [0.0, 3.0]]), f32([[0.0, 1.0], [2.0, 0.0]])  # per sample 1, 13
    loss_r, loss_c = critic_losses(q_r, q_c, y_r, y_c)
    assert (float(loss_r), float(loss_c)) == pytest.approx((6.0, 7.0))


def test_soft_value_and_the_actors_loss():
    q_r, logp = f32([[1.0, 5.0], [2.0, 3.0]]), f32([-1.0, 2.0])
    np.testing.assert_allclose(soft_value(q_r, f32(0.5), logp), [1.0 + 0.5, 3.0 - 1.0])
    assert float(objective_loss(f32([1.5, 2.0]))) == pytest.approx(-1.75)


def test_temperature_loss_raises_alpha_when_the_entropy_is_below_the_target():
    gap = f32([1.0, 3.0])  # log π + target entropy > 0: the entropy is under the target
    assert float(temperature_loss(f32(math.log(0.2)), gap)) == pytest.approx(-math.log(0.2) * 2.0, rel=1e-6)
    grad = jax.grad(temperature_loss)(f32(0.0), gap)
    assert float(grad) == pytest.approx(-2.0)  # gradient descent then raises log α
    assert float(jax.grad(temperature_loss)(f32(0.0), -gap)) == pytest.approx(2.0)


def test_polyak_moves_the_target_by_tau():
    np.testing.assert_allclose(polyak(f32([0.0, 4.0]), f32([8.0, 0.0]), 0.25), [2.0, 3.0])
    np.testing.assert_allclose(polyak(f32([1.0]), f32([5.0]), 1.0), [5.0])


def test_smoothed_action_clips_the_noise_then_the_action():
    action = f32([0.0, 0.0, 0.9, -0.9])
    noise = f32([1.0, 5.0, 1.0, -1.0])  # σε = 0.2, 1.0 (clipped to 0.5), 0.2, −0.2; then a + σε clipped to ±1
    np.testing.assert_allclose(smoothed_action(action, noise, 0.2, 0.5), [0.2, 0.5, 1.0, -1.0], rtol=1e-6)
    np.testing.assert_allclose(smoothed_action(action, noise, 0.0, 0.5), action)


def test_tanh_log_det_is_the_log_jacobian_and_stays_finite_where_tanh_saturates():
    u = f32([[0.3, -1.2]])
    naive = np.sum(np.log(1.0 - np.tanh(np.asarray(u, np.float64)) ** 2), axis=-1)
    np.testing.assert_allclose(tanh_log_det(u), naive, rtol=1e-5)
    # at u = 20, 1 − tanh(u)² rounds to 0 in float32; the exact value is 2·(log 2 − 20) + O(e⁻⁴⁰)
    assert float(tanh_log_det(f32([[20.0]]))[0]) == pytest.approx(2.0 * (math.log(2.0) - 20.0), rel=1e-6)


def test_squash_gives_the_tanh_of_the_sample_and_its_corrected_log_density():
    loc, scale, noise = f32([[0.5, -0.5]]), f32([[2.0, 0.5]]), f32([[0.25, 1.0]])
    u = np.asarray([0.5 + 2.0 * 0.25, -0.5 + 0.5 * 1.0])
    action, logp = squash(loc, scale, noise)
    np.testing.assert_allclose(action[0], np.tanh(u), rtol=1e-6)
    gaussian = np.sum(-0.5 * np.asarray([0.25, 1.0]) ** 2 - np.log([2.0, 0.5]) - 0.5 * math.log(2 * math.pi))
    want = gaussian - np.sum(np.log(1.0 - np.tanh(u) ** 2))
    assert float(logp[0]) == pytest.approx(want, rel=1e-5)
