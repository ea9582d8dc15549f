"""Each cost term's per-step mean is logged every iteration, whether or not an episode ended in it."""

from __future__ import annotations

import jax
import pytest

from crax import runs
from crax.learners import PPO, PPOLag, Trainer
from crax.runs.metrics import read_metrics
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnvTwoCosts

STEPS_PER_ITER = 64  # TINY: 8 envs × 8 steps


def test_per_term_step_costs_reach_metrics_before_any_episode_ends(tmp_path):
    # Episodes of 16 steps, all starting together, no pit: none ends in iteration 1 (8 steps per env),
    # all end at the last step of iteration 2, so the episode sums cover exactly iterations 1 and 2.
    env = ToyEnvTwoCosts(episode_length=16, pit_radius=0.0)
    config = tiny(PPO.Config, total_steps=2 * STEPS_PER_ITER, desync_episodes=False, num_evals=0)
    runs.train(PPO, config, env, run_dir=tmp_path / "r", progress=False)
    first, second = [r for r in read_metrics(tmp_path / "r") if "loss/policy" in r]

    assert "episode/cost/edge" not in first  # no episode ended: the episodic sums say nothing yet
    for record in (first, second):
        terms = record["constraint/step_cost/cost/hazard"] + record["constraint/step_cost/cost/edge"]
        assert terms == pytest.approx(record["constraint/step_cost"], rel=1e-5)  # the terms make up the sum
    assert first["constraint/step_cost/cost/hazard"] > 0 and first["constraint/step_cost/cost/edge"] > 0
    for term in ("cost/hazard", "cost/edge"):  # 8 steps per env per iteration: episode sum = 8 · both means
        both = first[f"constraint/step_cost/{term}"] + second[f"constraint/step_cost/{term}"]
        assert second[f"episode/{term}"] == pytest.approx(8 * both, rel=1e-5)


def test_budgeted_terms_keep_their_names_and_the_sum_is_logged_too():
    env = ToyEnvTwoCosts(episode_length=16, pit_radius=0.0)
    trainer = Trainer(PPOLag, tiny(PPOLag.Config, budgets=("cost/hazard=4",)), env)
    _, m = trainer.run(trainer.init(jax.random.key(0)), 1)
    hazard, edge, total = (float(m[k][0, 0]) for k in ("constraint/step_cost/cost/hazard",
                                                        "constraint/step_cost/cost/edge", "constraint/step_cost"))
    assert hazard + edge == pytest.approx(total, rel=1e-5) and edge > 0
    assert float(m["constraint/violation/cost/hazard"][0, 0]) == pytest.approx(hazard - 4 / 16, rel=1e-5)
