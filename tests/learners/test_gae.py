"""GAE against a plain numpy reference, and the running observation normalizer."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from crax.learners import gae
from crax.learners.on_policy.trainer import next_values
from crax.learners.shared.networks import Normalizer, gaussian_kl


def numpy_gae(rewards, values, next_values, terminated, truncated, gamma, lam):
    """Textbook per-env backward recursion with explicit branches."""
    T, N = rewards.shape
    adv = np.zeros((T, N))
    for n in range(N):
        running = 0.0
        for t in reversed(range(T)):
            if terminated[t, n]:
                delta = rewards[t, n] - values[t, n]  # no bootstrap after a true terminal state
                running = delta
            elif truncated[t, n]:
                delta = rewards[t, n] + gamma * next_values[t, n] - values[t, n]  # bootstrap V(final_obs)
                running = delta
            else:
                delta = rewards[t, n] + gamma * next_values[t, n] - values[t, n]
                running = delta + gamma * lam * running
            adv[t, n] = running
    return adv, adv + values


def test_gae_matches_numpy_with_termination_and_truncation_in_one_batch():
    rng = np.random.default_rng(0)
    T, N = 12, 5
    rewards = rng.normal(size=(T, N))
    values = rng.normal(size=(T, N))
    next_values = rng.normal(size=(T, N))
    terminated = np.zeros((T, N), bool)
    truncated = np.zeros((T, N), bool)
    terminated[3, 0] = terminated[7, 2] = terminated[11, 4] = True
    truncated[5, 0] = truncated[2, 1] = truncated[9, 2] = truncated[11, 3] = True
    done = terminated | truncated
    assert (terminated & truncated).sum() == 0 and done.sum() == 7

    adv, target = gae(jnp.asarray(rewards), jnp.asarray(values), jnp.asarray(next_values),
                      jnp.asarray(terminated, jnp.float32), jnp.asarray(done, jnp.float32), 0.97, 0.9)
    ref_adv, ref_target = numpy_gae(rewards, values, next_values, terminated, truncated, 0.97, 0.9)
    np.testing.assert_allclose(adv, ref_adv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(target, ref_target, rtol=1e-5, atol=1e-5)


def test_truncation_bootstraps_and_termination_does_not():
    ones = jnp.ones((1, 2))
    # env 0 truncated, env 1 terminated; both have next value 10
    adv, _ = gae(ones, jnp.zeros((1, 2)), 10 * ones, jnp.asarray([[0.0, 1.0]]), ones, 0.5, 0.95)
    np.testing.assert_allclose(adv, [[1.0 + 0.5 * 10, 1.0]])


def test_normalizer_matches_numpy_statistics_over_batches():
    rng = np.random.default_rng(1)
    batches = [rng.normal(loc=3.0, scale=2.0, size=(n, 4)) for n in (7, 50, 13)]
    norm = Normalizer(4)
    for b in batches:
        norm.update(jnp.asarray(b, jnp.float32))
    data = np.concatenate(batches)
    np.testing.assert_allclose(norm.mean[...], data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(norm.var[...], data.var(0), rtol=1e-4)
    np.testing.assert_allclose(norm(jnp.asarray(data, jnp.float32)), (data - data.mean(0)) / data.std(0), atol=1e-3)


def test_gaussian_kl_matches_monte_carlo():
    loc_p, scale_p = jnp.array([0.3, -0.2]), jnp.array([0.5, 1.2])
    loc_q, scale_q = jnp.array([0.0, 0.1]), jnp.array([0.7, 1.0])
    x = loc_p + scale_p * jax.random.normal(jax.random.key(0), (200_000, 2))
    logp = -0.5 * ((x - loc_p) / scale_p) ** 2 - jnp.log(scale_p)
    logq = -0.5 * ((x - loc_q) / scale_q) ** 2 - jnp.log(scale_q)
    np.testing.assert_allclose(gaussian_kl(loc_p, scale_p, loc_q, scale_q), jnp.sum(logp - logq, -1).mean(), rtol=2e-2)


def test_next_values_reuse_the_next_steps_values_and_call_the_critics_only_where_needed():
    T, N, D = 9, 6, 3
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(T, N, D)).astype(np.float32)
    truncation = np.zeros((T, N), np.float32)
    done = np.zeros((T, N), np.float32)
    truncation[2, 1] = done[2, 1] = 1.0  # truncated: bootstrap from its final_obs
    done[4, 3] = 1.0  # terminated: GAE zeroes its next value
    done[5, :] = truncation[5, :] = 1.0  # every env truncated at once: more rows than one chunk
    final_obs = np.concatenate([obs[1:], rng.normal(size=(1, N, D)).astype(np.float32)])
    ended = done > 0
    final_obs[ended] = rng.normal(size=(int(ended.sum()), D))  # an episode's last observation, not the next obs
    final_obs[6, 2] += 0.5  # a step whose final_obs is not the next obs though the env went on
    w, m = rng.normal(size=D).astype(np.float32), rng.normal(size=(D, 2)).astype(np.float32)
    seen = []

    def values(x):
        seen.append(x.shape[0])
        return jnp.tanh(x @ w), x @ m  # row-wise, a scalar critic and one of two cost terms

    obs_values = values(jnp.asarray(obs))
    got = jax.jit(lambda *a: next_values(values, *a))(obs, obs_values, final_obs, done, truncation)
    want = values(jnp.asarray(final_obs))
    kept = done * (1 - truncation) == 0  # everywhere but the termination
    for g, v in zip(got, want, strict=True):
        assert g.shape == v.shape
        np.testing.assert_allclose(np.asarray(g)[kept], np.asarray(v)[kept], rtol=1e-6, atol=1e-6)
    # the critics ran on chunks of N + N/4 rows inside the loop, not on all T·N final observations
    assert seen[1] == N + 2 and max(seen[1:]) < T * N
