"""``wrap_for_training(env, n).reset`` takes a batch of ``n`` keys, as ``Vmap``'s docstring promises
(issue 25, item 22): env i starts from ``env.reset(keys[i])``; a batch of another size is refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.core.env import EpisodeStats, Vmap, wrap_for_training
from tests.learners.toy_env import ToyEnv


def test_training_stack_resets_from_a_batch_of_keys():
    keys = jax.random.split(jax.random.key(3), 4)
    env = wrap_for_training(ToyEnv(episode_length=2), 4)
    state = env.reset(keys)
    np.testing.assert_array_equal(state.obs, jnp.stack([ToyEnv().reset(k).obs for k in keys]))
    np.testing.assert_array_equal(state.obs, Vmap(EpisodeStats(ToyEnv()), 4).reset(keys).obs)
    for _ in range(2):  # through an auto-reset: every env starts a new, different episode
        state = env.step(state, jnp.zeros((4, 2)))
    assert len({tuple(np.asarray(o).round(6)) for o in state.obs}) == 4


def test_a_key_batch_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match=r"batch of 3 keys for 4 envs"):
        wrap_for_training(ToyEnv(), 4).reset(jax.random.split(jax.random.key(0), 3))
