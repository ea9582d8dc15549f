"""The safety layer (crax/learners/shared/safety_layer.py; Dalal et al. 2018): the closed-form correction
by hand, the pre-training's fit of a known linear cost model, and the wrapper's steps and metrics on the
toy env (cost 1 while y > 0.2; an action moves the point by 0.1·a)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.core.env import AutoReset, EpisodeStats, State, Vmap
from crax.learners import PPO
from crax.learners.shared.safety_layer import (
    COST,
    METRICS,
    CostModel,
    FitReport,
    SafetyLayer,
    correct,
    find,
    pretrain,
    safety_layer,
)
from tests.learners.conftest import tiny
from tests.learners.test_shield import at, chain
from tests.learners.toy_env import ToyEnv, TwoActionEnv

UP = jnp.asarray([0.0, 1.0])

G0 = np.asarray([0.5, -0.3], np.float32)
M = np.asarray([[0.4, 0.1], [0.0, -0.6]], np.float32)


def true_g(pos) -> np.ndarray:
    """g of :class:`LinearCostEnv`: affine in the position."""
    return G0 + np.asarray(pos) @ M.T


class LinearCostEnv(TwoActionEnv):
    """A point on the torus ``[-1, 1)²`` moved by ``0.1·a``, whose next cost is exactly ``c + g(s)ᵀa`` with
    ``g(s) = G0 + M s`` (:func:`true_g`; ``c`` the cost of the last step, 0 at a reset): the safety layer's
    model, which its fit must recover."""

    def __init__(self, episode_length: int = 16):
        super().__init__(episode_length, dt=0.1)

    def reset(self, key: jax.Array) -> State:
        pos = jax.random.uniform(key, (2,), minval=-1.0, maxval=1.0)
        zero = jnp.zeros((), jnp.float32)
        # the last cost lives in data, which an auto-reset swaps for the new episode's (state.cost it keeps)
        return State(data={"pos": pos, "cost": zero}, obs=pos, reward=zero, cost=zero, done=zero, truncation=zero,
                     info={"steps": zero}, metrics={"cost/linear": zero})

    def step(self, state: State, action: jax.Array) -> State:
        pos = state.data["pos"]
        cost = state.data["cost"] + jnp.dot(jnp.asarray(G0) + jnp.asarray(M) @ pos, action)
        new = jnp.mod(pos + 0.1 * action + 1.0, 2.0) - 1.0
        t = state.info["steps"] + 1.0
        done = (t >= self._episode_length).astype(jnp.float32)
        return state.replace(data={"pos": new, "cost": cost}, obs=new, reward=jnp.zeros((), jnp.float32), cost=cost,
                             done=done, truncation=done, info={**state.info, "steps": t}, metrics={"cost/linear": cost})


def constant_model(g, state_size: int = 2) -> CostModel:
    """A cost model whose g is ``g`` in every state (a single layer: kernel 0, bias g)."""
    model = CostModel(state_size, len(g), hidden=(), rngs=nnx.Rngs(0))
    layer = model.net.layers[0]
    layer.kernel[...] = jnp.zeros_like(layer.kernel[...])
    assert layer.bias is not None
    layer.bias[...] = jnp.asarray(g, jnp.float32)
    return model


# ---- the correction ----------------------------------------------------------------------------------


def test_the_correction_projects_onto_the_bound_by_the_closed_form():
    g, a = jnp.asarray([0.5, -0.25]), jnp.asarray([0.4, -0.2])
    # predicted cost 0.3 + 0.2 + 0.05 = 0.55 > C = 0.1: λ* = 0.45 / (0.25 + 0.0625) = 1.44
    corrected, lam = correct(g, a, jnp.asarray(0.3), 0.1)
    assert float(lam) == pytest.approx(1.44, rel=1e-6)
    np.testing.assert_allclose(corrected, [0.4 - 1.44 * 0.5, -0.2 + 1.44 * 0.25], rtol=1e-6)
    assert float(0.3 + jnp.dot(g, corrected)) == pytest.approx(0.1, abs=1e-6)  # on the bound: not clipped
    # inside a hazard (c = 1) with C = 0.5: the action is pushed against g until 1 + gᵀa* = 0.5
    g, a = jnp.asarray([0.0, 0.8]), jnp.asarray([0.3, 0.1])
    corrected, lam = correct(g, a, jnp.asarray(1.0), 0.5)
    assert float(lam) == pytest.approx((0.08 + 1 - 0.5) / 0.64, rel=1e-6)
    np.testing.assert_allclose(corrected, [0.3, 0.1 - 0.58 / 0.8], rtol=1e-6)
    assert float(1.0 + jnp.dot(g, corrected)) == pytest.approx(0.5, abs=1e-6)


def test_an_action_predicted_within_the_bound_is_not_corrected():
    g = jnp.asarray([1.0, 2.0])
    for a, c, bound in [([0.1, 0.1], 0.0, 0.5), ([0.1, 0.2], 0.0, 0.5), ([-0.5, 0.0], 0.9, 0.5), ([0.9, -0.9], 0.0, 0.0)]:
        corrected, lam = correct(g, jnp.asarray(a), jnp.asarray(c), bound)
        assert float(lam) == 0, (a, c, bound)
        np.testing.assert_array_equal(corrected, np.asarray(a, np.float32))
    corrected, lam = correct(jnp.zeros(2), jnp.asarray([0.3, -0.4]), jnp.asarray(1.0), 0.5)  # no g: no way to act
    np.testing.assert_array_equal(corrected, np.asarray([0.3, -0.4], np.float32))


def test_the_corrected_action_is_clipped_to_the_action_box_and_batches():
    g = jnp.asarray([[2.0, 0.0], [0.0, 1.0]])
    a = jnp.asarray([[0.9, 0.5], [0.2, 0.2]])
    corrected, lam = correct(g, a, jnp.asarray([1.0, 0.0]), 0.0)
    # row 0: λ* = (1.8 + 1) / 4 = 0.7, a − λ* g = (−0.5, 0.5); row 1: λ* = 0.2, (0.2, 0)
    np.testing.assert_allclose(lam, [0.7, 0.2], rtol=1e-6)
    np.testing.assert_allclose(corrected, [[-0.5, 0.5], [0.2, 0.0]], atol=1e-6)
    corrected, lam = correct(jnp.asarray([0.1, 0.0]), jnp.asarray([0.5, 0.0]), jnp.asarray(1.0), 0.0)
    assert float(lam) == pytest.approx(105.0, rel=1e-5)  # −10 away: the box clips it (the bound is out of reach)
    np.testing.assert_allclose(corrected, [-1.0, 0.0])


# ---- the wrapper ---------------------------------------------------------------------------------------


def test_the_wrapper_corrects_an_action_heading_into_the_hazard_and_logs_it():
    plain, env = ToyEnv(), SafetyLayer(ToyEnv(), constant_model([0.0, 1.0]), bound=0.5)
    state = env.reset(jax.random.key(0))
    assert set(METRICS) <= set(state.metrics) and float(state.info[COST]) == 0
    step = jax.jit(env.step)
    # c = 0, gᵀa = 1 > 0.5: λ* = 0.5, a* = (0, 0.5)
    state = step(at(env, 0.0, 0.0), UP)
    assert float(state.metrics["safety_layer/intervened"]) == 1
    assert float(state.metrics["safety_layer/correction"]) == pytest.approx(0.5)
    np.testing.assert_allclose(state.obs, [0.0, 0.05], atol=1e-6)
    expected = plain.step(at(plain, 0.0, 0.0), jnp.asarray([0.0, 0.5]))
    assert float(state.reward) == pytest.approx(float(expected.reward)) and float(state.cost) == 0
    assert np.isnan(float(state.metrics["safety_layer/fit_loss"]))  # built by hand: no fit to report
    # predicted 0 + 0.5 = C: let through, into the hazard; c(s) = 1 is kept, and the next action, predicted
    # 1 − 0.2 = 0.8, is pushed down: λ* = 0.3, a* = (0.4, −0.5), out of the hazard again
    state = step(at(env, 0.0, 0.19), jnp.asarray([0.0, 0.5]))
    assert float(state.metrics["safety_layer/intervened"]) == 0 and float(state.cost) == 1
    np.testing.assert_allclose(state.obs, [0.0, 0.24], atol=1e-6)
    assert float(state.info[COST]) == 1
    state = step(state, jnp.asarray([0.4, -0.2]))
    assert float(state.metrics["safety_layer/intervened"]) == 1
    assert float(state.metrics["safety_layer/correction"]) == pytest.approx(0.3, rel=1e-5)
    np.testing.assert_allclose(state.obs, [0.04, 0.19], atol=1e-6)
    assert float(state.info[COST]) == 0


def test_an_action_predicted_safe_passes_unchanged_and_the_state_is_the_unwrapped_step():
    plain, env = ToyEnv(), SafetyLayer(ToyEnv(), constant_model([0.0, 1.0]), bound=0.5)
    action = jnp.asarray([0.3, 0.2])
    state = jax.jit(env.step)(at(env, 0.1, -0.5), action)
    assert float(state.metrics["safety_layer/intervened"]) == 0 and float(state.metrics["safety_layer/correction"]) == 0
    expected = plain.step(at(plain, 0.1, -0.5), action)
    got = state.replace(metrics={k: v for k, v in state.metrics.items() if k not in METRICS},
                        info={k: v for k, v in state.info.items() if k != COST})
    jax.tree.map(np.testing.assert_array_equal, got, expected)
    nan = jax.jit(env.step)(at(env, 0.1, -0.5), jnp.asarray([jnp.nan, 1.0]))  # left for the env to handle
    assert float(nan.metrics["safety_layer/intervened"]) == 0 and float(nan.metrics["safety_layer/correction"]) == 0


def test_the_remembered_cost_restarts_with_each_episode():
    env = AutoReset(Vmap(EpisodeStats(SafetyLayer(ToyEnv(episode_length=2, hazard_y=-10.0),
                                                  constant_model([0.0, 0.0]))), 3))
    state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    state = step(state, jnp.zeros((3, 2)))
    np.testing.assert_array_equal(state.info[COST], [1, 1, 1])  # every step costs here
    state = step(state, jnp.zeros((3, 2)))  # the episodes end: the new ones start from the reset's cost
    np.testing.assert_array_equal(state.cost, [1, 1, 1])
    np.testing.assert_array_equal(state.info[COST], [0, 0, 0])


def test_bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="safety_layer_steps 0 means no safety layer"):
        pretrain(ToyEnv(), tiny(PPO.Config), jax.random.key(0))
    with pytest.raises(ValueError, match="finite number"):
        SafetyLayer(ToyEnv(), constant_model([0.0, 1.0]), bound=float("nan"))
    with pytest.raises(ValueError, match="g of shape \\(3,\\)"):
        SafetyLayer(ToyEnv(), constant_model([0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match="needs a CostModel"):
        SafetyLayer(ToyEnv(), lambda s: s)  # pyright: ignore[reportArgumentType]
    for field, value in [("safety_layer_steps", -1), ("safety_layer_envs", 0), ("safety_layer_epochs", 0),
                         ("safety_layer_batch", 0), ("safety_layer_lr", 0.0), ("safety_layer_hidden", (0,)),
                         ("safety_layer_bound", -0.5), ("safety_layer_steps", 2.5)]:
        with pytest.raises(ValueError, match=f"config field '{field}'"):
            tiny(PPO.Config, **{field: value})


# ---- the pre-training ----------------------------------------------------------------------------------


def test_the_fit_recovers_a_known_linear_cost_model():
    config = tiny(PPO.Config, safety_layer_steps=2000, safety_layer_envs=32, safety_layer_epochs=40,
                  safety_layer_batch=64, safety_layer_lr=1e-2, safety_layer_hidden=())
    model, report = pretrain(LinearCostEnv(), config, jax.random.key(0))
    assert report.transitions == 2016  # 63 steps of 32 envs
    assert report.baseline_loss > 0.05 and report.loss < 1e-4 * report.baseline_loss
    assert 0 < report.cost_rate < 1
    pos = jax.random.uniform(jax.random.key(1), (64, 2), minval=-1.0, maxval=1.0)
    np.testing.assert_allclose(model(pos), true_g(pos), atol=0.01)


def test_safety_layer_pretrains_and_wraps_under_the_episode_statistics():
    config = tiny(PPO.Config, safety_layer_steps=512, safety_layer_envs=16, safety_layer_epochs=2,
                  safety_layer_hidden=(8,))
    env = safety_layer(EpisodeStats(ToyEnv()), config, jax.random.key(0))
    assert chain(env) == [EpisodeStats, SafetyLayer, ToyEnv]
    layer = find(env)
    assert isinstance(layer, SafetyLayer) and find(ToyEnv()) is None
    report = layer.report
    assert isinstance(report, FitReport) and report.transitions == 512
    assert np.isfinite([report.loss, report.baseline_loss]).all() and 0 < report.cost_rate < 1
    assert layer.bound == 0.5
    state = jax.jit(env.step)(env.reset(jax.random.key(1)), UP)
    assert float(state.metrics["safety_layer/fit_loss"]) == pytest.approx(report.loss)
    assert float(state.metrics["safety_layer/fit_baseline_loss"]) == pytest.approx(report.baseline_loss)
    assert float(state.metrics["episode/length"]) == 0 and float(state.info["episode"]["length"]) == 1
    for k in METRICS:
        assert np.isfinite(float(state.metrics[k])), k


def test_a_trainer_with_safety_layer_steps_trains_and_evaluates_through_the_layer():
    """``--safety-layer-steps`` puts a fitted layer under the trainer's episode statistics: training and
    evaluation step through it, and the iteration logs its means (the fraction of corrected steps)."""
    from crax.learners import PPOLag, Trainer

    config = tiny(PPOLag.Config, safety_bound=2.0, safety_layer_steps=256, safety_layer_envs=16,
                  safety_layer_epochs=2, safety_layer_hidden=(8,), safety_layer_bound=0.0)
    trainer = Trainer(PPOLag, config, ToyEnv())
    assert isinstance(find(trainer.eval_env), SafetyLayer) and isinstance(find(trainer.train_env), SafetyLayer)
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 1)
    intervened = np.asarray(metrics["safety_layer/intervened"])
    assert intervened.shape == (config.num_seeds, 1) and ((0 <= intervened) & (intervened <= 1)).all()
    assert np.isfinite(np.asarray(metrics["safety_layer/fit_loss"])).all()
    plain = Trainer(PPOLag, tiny(PPOLag.Config, safety_bound=2.0), ToyEnv())
    assert find(plain.train_env) is None and "safety_layer/intervened" not in plain.run(plain.init(jax.random.key(0)), 1)[1]
