"""Evaluation of both policies (SPEC decision 56) and desynchronised episode starts (decision 57)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax import runs
from crax.core.env import EpisodeStats, Vmap
from crax.learners import PPO, PPOLag, Trainer
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

T = 16  # ToyEnv's episode length; TINY runs 8 steps per env and iteration


@pytest.fixture(scope="module")
def trainer():
    return Trainer(PPO, tiny(PPO.Config, eval_envs=6), ToyEnv(episode_length=T, hazard_y=-10.0))


@pytest.mark.slow
def test_deterministic_evaluation_is_the_mean_action_and_stochastic_samples(trainer):
    state = trainer.init(jax.random.key(0))
    ev = jax.device_get(trainer.evaluate(state, jax.random.key(5)))
    assert set(ev) == {"stochastic", "deterministic"}
    for mode in ev:
        keys = ("return", "cost", "length", "over_bound", "costly_steps")
        assert {k: v.shape for k, v in ev[mode].items()} == {k: (1, 6) for k in keys}
        np.testing.assert_array_equal(ev[mode]["length"], T)
        np.testing.assert_array_equal(ev[mode]["cost"], T)  # hazard_y = −10: every step costs 1
        np.testing.assert_array_equal(ev[mode]["costly_steps"], T)
        np.testing.assert_array_equal(ev[mode]["over_bound"], float(T > trainer.config.safety_bound))

    # the deterministic episodes by hand: the same start states, tanh of the mean action
    learner = trainer.learner(state)
    env = Vmap(EpisodeStats(ToyEnv(episode_length=T, hazard_y=-10.0)), 6)
    k_reset, _ = jax.random.split(trainer.seed_keys(jax.random.key(5))[0])
    s, total = env.reset(k_reset), np.zeros(6)
    for _ in range(T):
        s = env.step(s, jnp.tanh(learner.policy(s.obs)[0]))
        total += np.asarray(s.reward)
    np.testing.assert_allclose(ev["deterministic"]["return"][0], total, rtol=1e-5, atol=1e-6)
    assert not np.allclose(ev["stochastic"]["return"], ev["deterministic"]["return"])
    again = jax.device_get(trainer.evaluate(state, jax.random.key(6)))
    assert not np.allclose(again["stochastic"]["return"], ev["stochastic"]["return"])


@pytest.mark.parametrize("policy", ["stochastic", "deterministic"])
@pytest.mark.slow
def test_final_report_judges_the_configured_policy_with_spread(tmp_path, policy):
    config = tiny(PPO.Config, total_steps=64, eval_policy=policy, safety_bound=10.0, eval_envs=5)
    result = runs.train(PPO, config, ToyEnv(episode_length=T, hazard_y=0.0), run_dir=tmp_path / "r",
                          progress=False)
    final = result.final[0]
    assert final["policy"] == policy
    for k in ("return", "cost", "length", "return_std", "cost_std"):
        assert final[k] == final[policy][k]
    assert final["safe"] == (final[policy]["cost"] < 10.0)
    other = "deterministic" if policy == "stochastic" else "stochastic"
    assert set(final[other]) >= {"return", "cost", "return_std", "cost_std"}
    assert final["cost_std"] >= 0.0 and final["return_std"] > 0.0  # five episodes from different starts
    tags = {k for r in result.history for k in r}
    assert {"eval/stochastic/cost", "eval/deterministic/cost", "eval/stochastic/cost_std"} <= tags
    res = runs.evaluate(result.run_dir, episodes=3)
    assert res["policy"] == policy and res["cost"] == res[policy]["cost"]
    assert runs.evaluate(result.run_dir, episodes=3, policy=other)["policy"] == other
    with pytest.raises(ValueError, match="stochastic, deterministic"):
        runs.evaluate(result.run_dir, policy="greedy")


@pytest.mark.slow
def test_training_envs_start_at_random_steps_and_partial_episodes_are_not_counted():
    config = tiny(PPOLag.Config)
    trainer = Trainer(PPOLag, config, ToyEnv(episode_length=T, hazard_y=-10.0, pit_radius=0.0))  # no termination
    state = trainer.init(jax.random.key(1))
    steps = np.asarray(state.env.info["steps"][0])
    assert steps.min() >= 0 and steps.max() < T and len(set(steps.tolist())) > 3
    np.testing.assert_array_equal(state.env.info["episode"]["partial"][0], (steps > 0).astype(np.float32))

    # iteration 1 (8 steps per env): envs that started at step >= 8 end their shortened episode, unreported
    state, m1 = trainer.run(state, 1)
    assert (steps >= 8).any() and float(m1["episode/count"][0, 0]) == 0.0
    # by the end of iteration 3 (24 steps) a whole episode ended in the envs that started at step 0 (at step
    # 16) and in those that started at o >= 8 (the shortened one at T − o, the whole one at 2T − o <= 24)
    state, m = trainer.run(state, 2)
    counts = np.asarray(m["episode/count"][0])
    assert counts.sum() == ((steps == 0) | (steps >= 8)).sum()
    lengths = np.asarray(m["episode/length"][0])[counts > 0]
    np.testing.assert_array_equal(lengths, T)  # only whole episodes: cost T each (every step costs 1)
    np.testing.assert_array_equal(np.asarray(m["episode/cost"][0])[counts > 0], T)
    # each term's episode sum is logged too; the toy env has one of each, so they equal the totals
    np.testing.assert_array_equal(m["episode/cost/hazard"], m["episode/cost"])
    np.testing.assert_allclose(m["episode/reward/progress"], m["episode/return"], rtol=1e-6)


def test_desync_off_starts_every_env_at_step_zero():
    trainer = Trainer(PPO, tiny(PPO.Config, desync_episodes=False), ToyEnv(episode_length=T))
    state = trainer.init(jax.random.key(1))
    np.testing.assert_array_equal(state.env.info["steps"], 0)
    np.testing.assert_array_equal(state.env.info["episode"]["partial"], 0)


def test_an_evaluation_summary_reports_the_cost_tail_a_mean_hides():
    """Ten episodes, one of them far over the bound: the mean hides it, the tail statistics do not."""
    from crax.runs.results import eval_summary

    cost = np.array([[0, 0, 0, 0, 0, 0, 0, 0, 2, 90]], np.float32)
    ev = {"stochastic": {"return": np.ones((1, 10)), "cost": cost, "length": np.full((1, 10), 100.0),
                         "over_bound": (cost > 25).astype(np.float32), "costly_steps": np.minimum(cost, 100)}}
    s = eval_summary(ev, 0)["stochastic"]
    assert s["cost"] == pytest.approx(9.2) and s["over_bound"] == pytest.approx(0.1)
    assert s["cost_cvar"] == pytest.approx(90.0)  # the worst tenth: one episode of ten
    assert s["costly_step_fraction"] == pytest.approx(92 / 1000)
    assert eval_summary(ev, None)["stochastic"]["cost_cvar"] == pytest.approx(90.0)
