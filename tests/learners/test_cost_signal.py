"""The constraint signal: the rollout's mean step cost, or a window of finished episodes' costs (OmniSafe's EpCost)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.learners import PPOLag
from tests.learners.conftest import tiny

T = 10  # episode length
BOUND = 5.0


def learner(**overrides) -> PPOLag:
    return PPOLag(tiny(PPOLag.Config, safety_bound=BOUND, **overrides), 3, 2, T, rngs=nnx.Rngs(0))


def rollout(episode_costs: list[float], steps: int = 6, envs: int = 2, step_cost: float = 0.3):
    """A (steps, envs) rollout whose finished episodes (in time-major order) cost ``episode_costs``."""
    cost = jnp.full((steps, envs), step_cost)
    done = np.zeros((steps, envs), np.float32)
    ep = np.zeros((steps, envs), np.float32)
    for i, c in enumerate(episode_costs):
        done.flat[i * 2] = 1.0  # every other row, time-major
        ep.flat[i * 2] = c
    return cost, jnp.asarray(ep), jnp.asarray(done)


def test_the_rollout_signal_is_the_mean_step_cost():
    learner_ = learner()
    v = learner_.rollout_violation(*rollout([100.0]))
    assert float(v) == pytest.approx(0.3 - BOUND / T)


def test_the_episode_signal_averages_a_window_of_the_latest_finished_episodes():
    learner_ = learner(cost_signal="episodes", cost_window=3)
    v = learner_.rollout_violation(*rollout([], step_cost=0.7))  # none finished yet: the rollout's
    assert float(v) == pytest.approx(0.7 - BOUND / T)
    v = learner_.rollout_violation(*rollout([2.0, 4.0]))
    assert float(v) == pytest.approx((3.0 - BOUND) / T)
    v = learner_.rollout_violation(*rollout([9.0]))  # window [2, 4, 9]
    assert float(v) == pytest.approx((5.0 - BOUND) / T)
    v = learner_.rollout_violation(*rollout([1.0, 3.0, 5.0, 7.0]))  # more than the window at once: the latest 3
    assert float(v) == pytest.approx((5.0 - BOUND) / T)
    v = learner_.rollout_violation(*rollout([8.0]))  # drops the oldest (3)
    assert float(v) == pytest.approx(((5.0 + 7.0 + 8.0) / 3 - BOUND) / T, rel=1e-6)
    assert int(learner_.episodes_seen[...]) == 2 + 1 + 3 + 1
    assert "episode_costs" not in learner_.multipliers()


def test_the_episode_signal_keeps_one_window_per_budgeted_term():
    learner_ = PPOLag(tiny(PPOLag.Config, budgets=("cost/a=4", "cost/b=6"), cost_signal="episodes", cost_window=2), 3, 2, T,
               rngs=nnx.Rngs(0))
    cost = jnp.zeros((4, 2, 2))
    done = jnp.asarray([[1, 0], [0, 1], [0, 0], [0, 0]], jnp.float32)
    ep = jnp.asarray([[[2.0, 8.0], [0, 0]], [[0, 0], [4.0, 10.0]], [[0, 0], [0, 0]], [[0, 0], [0, 0]]])
    v = learner_.rollout_violation(cost, ep, done)
    np.testing.assert_allclose(v, [(3.0 - 4) / T, (9.0 - 6) / T], rtol=1e-6)


def test_a_cvar_constraint_bounds_the_worst_fraction_of_the_window():
    """v = CVaR_α/T − d/T over the window, whatever cost_signal says: α = 0.4 of five episodes is the two worst."""
    learner_ = learner(constraint_kind="cvar", cvar_alpha=0.4, cost_window=5)
    v = learner_.rollout_violation(*rollout([1.0, 9.0, 3.0]))  # k = 1.2: 9 and a fifth of 3
    assert float(v) == pytest.approx(((9.0 + 0.2 * 3.0) / 1.2 - BOUND) / T, rel=1e-6)
    v = learner_.rollout_violation(*rollout([7.0, 2.0]))  # window [1, 9, 3, 7, 2]: k = 2
    assert float(v) == pytest.approx((8.0 - BOUND) / T, rel=1e-6)


def test_a_chance_constraint_weighs_the_excess_probability_in_units_of_the_bound():
    """v = (P̂(C > d) − δ)·d/T: two of four episodes over d = 5 against δ = 0.1."""
    learner_ = learner(constraint_kind="chance", violation_probability=0.1)
    v = learner_.rollout_violation(*rollout([], step_cost=0.7))  # none finished yet: the rollout's mean cost
    assert float(v) == pytest.approx(0.7 - BOUND / T)
    v = learner_.rollout_violation(*rollout([6.0, 1.0, 5.0, 12.0]))  # 5 itself is not over
    assert float(v) == pytest.approx((0.5 - 0.1) * BOUND / T, rel=1e-6)


def test_a_statewise_constraint_bounds_the_mean_largest_step_cost():
    """v = mean of the window's largest step costs − w; before an episode ends, each env's largest step
    cost in the rollout."""
    learner_ = learner(constraint_kind="statewise", step_bound=0.2, cost_window=3)
    cost = jnp.asarray([[0.0, 0.5], [1.0, 0.1], [0.0, 0.0]])
    v = learner_.rollout_violation(cost, jnp.zeros((3, 2)), jnp.zeros((3, 2)))
    assert float(v) == pytest.approx((1.0 + 0.5) / 2 - 0.2)
    v = learner_.rollout_violation(*rollout([1.0, 0.0, 1.0, 1.0]))  # peaks of 0/1 costs: window [0, 1, 1]
    assert float(v) == pytest.approx(2 / 3 - 0.2, rel=1e-6)


def test_a_statewise_constraint_refuses_per_term_budgets():
    with pytest.raises(ValueError, match="statewise.*budgets"):
        tiny(PPOLag.Config, constraint_kind="statewise", budgets=("cost/a=4",))


def test_a_constraint_kind_the_learner_cannot_steer_by_names_the_learners_that_can():
    from crax.learners import CPO
    from crax.runs.envs import trainer_for
    from tests.learners.toy_env import ToyEnv

    with pytest.raises(ValueError, match=r"learner 'cpo' bounds expected cost only, not constraint_kind='cvar' .*"
                                         r"learners that do: .*ppo-lag"):
        trainer_for(CPO, tiny(CPO.Config, constraint_kind="cvar"), ToyEnv())


def test_a_statewise_run_steers_its_multiplier_by_the_episodes_peak_cost():
    """Every ToyEnv step costs 1 (hazard below y = −10): each finished episode's largest step cost is 1, so
    v = 1 − w and the Lagrangian multiplier grows by η_λ·v each iteration (with w = 0.25: 0.75)."""
    import jax

    from crax.runs.envs import trainer_for
    from tests.learners.toy_env import ToyEnv

    config = tiny(PPOLag.Config, constraint_kind="statewise", step_bound=0.25, lambda_lr=0.1)
    trainer = trainer_for(PPOLag, config, ToyEnv(episode_length=4, hazard_y=-10.0))
    _, metrics = trainer.run(trainer.init(jax.random.key(0)), 3)
    ended = np.asarray(metrics["episode/count"]) > 0
    assert ended.any()
    np.testing.assert_allclose(np.asarray(metrics["episode/cost_peak"])[ended], 1.0)
    np.testing.assert_allclose(np.asarray(metrics["constraint/violation"]).reshape(-1), 0.75, rtol=1e-6)
    lam = np.asarray(metrics["multiplier/lagrange"]).reshape(-1)  # after each iteration's step
    np.testing.assert_allclose(lam, config.lambda_lr * 0.75 * np.arange(1, 4), rtol=1e-5)
