"""The PPO family's optimizers: one Adam over the learner, or one per network (OmniSafe's layout)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.learners import PPOLag
from crax.learners.on_policy.family import adam
from crax.learners.shared.optimizers import actor_learning_rate, per_network, set_actor_learning_rate
from tests.learners.conftest import tiny


def learner_and_optimizer(**overrides):
    learner = PPOLag(tiny(PPOLag.Config, **overrides), 3, 2, 100, rngs=nnx.Rngs(0))
    return learner, nnx.Optimizer(learner, adam(learner.config), wrt=nnx.Param)


def step_sizes(learner, optimizer, actor_scale: float, critic_scale: float) -> tuple[float, float]:
    """One optimizer step on a gradient of ``actor_scale`` on every actor parameter and ``critic_scale`` on
    every critic parameter; the largest move of an actor and of a critic parameter."""
    params = nnx.state(learner, nnx.Param)
    grads = jax.tree_util.tree_map_with_path(
        lambda p, x: jnp.full_like(x, actor_scale if p[0].key == "actor" else critic_scale), params)
    before = jax.tree.map(jnp.copy, params)
    optimizer.update(learner, grads)
    moved = jax.tree.map(lambda a, b: jnp.max(jnp.abs(a - b)), nnx.state(learner, nnx.Param), before)
    actor = max(float(v) for v in jax.tree.leaves(moved["actor"]))
    critic = max(float(v) for p, v in jax.tree_util.tree_leaves_with_path(moved) if p[0].key != "actor")
    return actor, critic


def test_the_default_is_one_adam_over_every_network():
    learner, optimizer = learner_and_optimizer(learning_rate=1e-3)
    assert not per_network(learner.config)
    actor, critic = step_sizes(learner, optimizer, 1.0, 1e-6)
    assert actor == pytest.approx(1e-3, rel=1e-3) and critic == pytest.approx(1e-3, rel=1e-2)  # Adam's first step: lr·sign


def test_a_global_clip_shrinks_every_network_by_the_largest_gradient():
    # With Adam a uniform rescaling cancels, except against ε: a tiny critic gradient shrunk by the actor's
    # norm falls under ε = 1e-8 and barely moves, while a per-network clip leaves it whole.
    common = dict(learning_rate=1e-3, max_grad_norm=1.0)
    learner, optimizer = learner_and_optimizer(**common)
    _, critic_global = step_sizes(learner, optimizer, 1e6, 1e-6)
    learner, optimizer = learner_and_optimizer(**common, grad_clip="per-network")
    _, critic_own = step_sizes(learner, optimizer, 1e6, 1e-6)
    assert critic_own == pytest.approx(1e-3, rel=1e-2)
    assert critic_global < 1e-5


def test_the_critics_take_their_own_learning_rate():
    learner, optimizer = learner_and_optimizer(learning_rate=1e-3, critic_learning_rate=1e-4)
    assert per_network(learner.config)
    actor, critic = step_sizes(learner, optimizer, 1.0, 1.0)
    assert actor == pytest.approx(1e-3, rel=1e-3) and critic == pytest.approx(1e-4, rel=1e-3)


def test_linear_decay_sets_the_actors_rate_alone():
    learner, optimizer = learner_and_optimizer(learning_rate=1e-3, lr_decay="linear")
    rate = actor_learning_rate(learner.config, jnp.asarray(0.75))
    assert float(rate) == pytest.approx(2.5e-4)
    set_actor_learning_rate(optimizer, rate)
    actor, critic = step_sizes(learner, optimizer, 1.0, 1.0)
    assert actor == pytest.approx(2.5e-4, rel=1e-3) and critic == pytest.approx(1e-3, rel=1e-3)


def test_the_critics_l2_penalty_adds_its_gradient():
    coef, l2 = 0.5, 1e-2
    learner = PPOLag(tiny(PPOLag.Config, value_loss_coef=coef, critic_l2=l2, normalize_observations=False), 3, 2, 100,
                     rngs=nnx.Rngs(0))
    plain = PPOLag(tiny(PPOLag.Config, value_loss_coef=coef, normalize_observations=False), 3, 2, 100, rngs=nnx.Rngs(0))
    mb = {"obs": jnp.ones((4, 3)), "target_r": jnp.zeros(4), "target_c": jnp.zeros(4)}
    grad = lambda m: nnx.grad(lambda m: m.value_loss(mb)[0])(m)  # noqa: E731
    g, g0 = grad(learner), grad(plain)
    kernel = learner.reward_critic.layers[0].kernel[...]
    np.testing.assert_allclose(g["reward_critic"]["layers"][0]["kernel"][...] - g0["reward_critic"]["layers"][0]["kernel"][...],
                               coef * l2 * 2 * kernel, rtol=1e-4, atol=1e-7)
