"""The trust-region learners in real updates and runs: one update on PointCircle1 keeps the measured KL
within δ (and CPO's infeasible step lowers the cost surrogate); ``crax train`` of each runs, logs its
step statistics to TensorBoard and ``metrics.jsonl``, takes per-term budgets where it can, and resumes
exactly."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from crax import runs
from crax.cli import train as train_cli
from crax.learners import CPO, CRPO, CUP, PCPO, Trainer, TRPOLag
from crax.learners.shared.networks import gaussian_kl_per_dim, gaussian_log_prob
from crax.runs.metrics import read_metrics
from tests.learners.conftest import TOY_ENV_ID, tiny
from tests.learners.test_resume import interrupt_at_call, records
from tests.learners.test_train import tiny_flags
from tests.learners.toy_env import ToyEnvTwoCosts

STEPS_PER_ITER = 64
LEARNERS = [TRPOLag, CPO, PCPO, CUP, CRPO]
STEP_STATISTICS = {
    "trpo-lag": ("multiplier/lagrange", "policy/kl", "trust_region/accepted_step", "trust_region/step_fraction"),
    "cpo": ("cpo/case", "cpo/lambda", "cpo/nu", "policy/kl", "trust_region/accepted_step",
            "trust_region/cost_surrogate_change"),
    "pcpo": ("pcpo/projection", "policy/kl", "trust_region/accepted_step", "trust_region/cost_surrogate_change"),
    "cup": ("multiplier/lagrange", "policy/kl", "cup/performance_epochs", "cup/projection_epochs",
            "loss/cup_projection"),
    "crpo": ("policy/kl", "trust_region/accepted_step", "trust_region/step_fraction"),
}


def one_update(cls, env, **overrides):
    """One seed's rollout and update (``Trainer._learn``) in one compiled call: the batch the update saw,
    the learner before (with the iteration's normalizer) and after, and the metrics."""
    trainer = Trainer(cls, tiny(cls.Config, **overrides), env)
    state = trainer.init(jax.random.key(0))
    update = trainer._update

    def rollout_and_learn(state):
        keys = jax.vmap(lambda k: jax.random.split(k, 3))(state.key)
        _, tr = trainer._rollout(state.model, state.env, keys[:, 1], state.env_steps, trainer.config.steps_per_env)
        model, tr = jax.tree.map(lambda x: x[0], (state.model, tr))
        seen = []
        trainer._update = lambda m, b, k: seen.append(b) or update(m, b, k)
        untouched = jax.tree.map(jnp.copy, model)  # _learn changes the model it merges in place
        new_model, metrics = trainer._learn(model, tr, keys[0, 2])
        return untouched, new_model, metrics, seen[0]

    model, new_model, metrics, batch = jax.jit(rollout_and_learn)(state)
    after = nnx.merge(trainer.graphdef, new_model)[0]
    before = nnx.merge(trainer.graphdef, model)[0]
    before.normalizer = after.normalizer  # the update's reference policy: old actor, this iteration's normalizer
    return batch, before, after, metrics


def surrogate(learner, samples, adv):
    loc, scale = learner.policy(samples["obs"])
    return float(jnp.mean(jnp.exp(gaussian_log_prob(samples["u"], loc, scale) - samples["logp"]) * adv))


def check_kl_within_delta(cls, batch, before, after, metrics) -> None:
    obs = batch.samples["obs"]
    kl = float(jnp.mean(gaussian_kl_per_dim(*before.policy(obs), *after.policy(obs))))
    delta = cls.Config().target_kl
    assert 0 < kl <= delta * (1 + 1e-4), kl  # a step was taken, and the line search kept it in the trust region
    assert float(metrics["policy/kl"]) == pytest.approx(kl, rel=1e-3)
    assert float(metrics["trust_region/accepted_step"]) >= 1


@pytest.mark.parametrize("cls", [TRPOLag, PCPO], ids=lambda c: c.name)
@pytest.mark.slow
def test_one_update_on_the_toy_env_keeps_the_kl_within_delta(cls):
    check_kl_within_delta(cls, *one_update(cls, ToyEnvTwoCosts(), safety_bound=0.0))


@pytest.mark.slow  # PointCircle1's physics compiles for the rollout (the cheapest navigation task to compile)
def test_one_real_update_on_point_circle_keeps_the_kl_within_delta_and_lowers_cpos_cost_surrogate():
    """CPO on PointCircle1 (the line search is the one TRPO-Lag and PCPO use; the toy test above runs
    theirs): one update from a random policy, every step costing, bound 0."""
    import crax

    cls = CPO

    overrides = dict(num_envs=64, batch_size=16, num_minibatches=4, unroll_length=8, actor_hidden=(32, 32),
                     critic_hidden=(32,), safety_bound=0.0)  # bound 0: any cost violates it
    # a random policy seldom meets a hazard in 8 steps: an action-energy term makes every step cost
    env = crax.make("PointCircle1", constraints={"ActionEnergy": {"weight": 0.1}})
    batch, before, after, metrics = one_update(cls, env, **overrides)
    check_kl_within_delta(cls, batch, before, after, metrics)
    assert float(batch.violation) > 0 and int(metrics["cpo/case"]) in (0, 1)  # infeasible at θ_old
    change = surrogate(after, batch.samples, batch.samples["adv_c"]) - surrogate(before, batch.samples,
                                                                                   batch.samples["adv_c"])
    assert change < 0, change  # the cost surrogate decreases
    assert float(metrics["trust_region/cost_surrogate_change"]) == pytest.approx(change, rel=1e-3, abs=1e-6)


def test_cpo_on_the_toy_env_in_the_infeasible_case_lowers_the_cost_surrogate():
    """The same check on the toy env (fast): every step in the hazard band costs, the bound is 0."""
    batch, before, after, metrics = one_update(CPO, ToyEnvTwoCosts(), safety_bound=0.0)
    assert int(metrics["cpo/case"]) in (0, 1) and float(metrics["trust_region/accepted_step"]) >= 1
    adv_c = batch.samples["adv_c"]
    assert surrogate(after, batch.samples, adv_c) < surrogate(before, batch.samples, adv_c)
    obs = batch.samples["obs"]
    assert float(jnp.mean(gaussian_kl_per_dim(*before.policy(obs), *after.policy(obs)))) <= 0.01 * (1 + 1e-4)


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.name)
@pytest.mark.slow  # three runs per learner, of one compiled program
def test_crax_train_logs_the_step_statistics_and_an_interrupted_run_resumes_exactly(tmp_path, monkeypatch, cls):
    iterations = 4
    settings = dict(total_steps=iterations * STEPS_PER_ITER, safety_bound=2.0, num_evals=2, checkpoint_every=2,
                    num_seeds=2)
    ref_dir = tmp_path / "ref"
    train_cli.train_main([cls.name, "--env", TOY_ENV_ID, "--run-dir", str(ref_dir), "--no-progress",
                          *tiny_flags(**settings)])
    assert json.loads((ref_dir / "config.json").read_text())["learner"] == cls.name
    logged = [r for r in read_metrics(ref_dir) if "policy/kl" in r]
    assert sorted((r["step"], r["seed"]) for r in logged) == [
        (i * STEPS_PER_ITER, seed) for i in range(1, iterations + 1) for seed in (0, 1)]
    for seed in (0, 1):  # the seeds are vmapped: each steps (and logs) on its own
        tags = EventAccumulator(str(ref_dir / "tb" / f"seed_{seed}")).Reload().Tags()["scalars"]
        for tag in (*STEP_STATISTICS[cls.name], "loss/value_reward", "loss/value_cost", "constraint/violation"):
            assert tag in tags, tag
            assert all(np.isfinite(r[tag]) for r in logged if tag in r), tag
    assert logged[0]["policy/kl"] != logged[1]["policy/kl"]
    delta = cls.Config().target_kl
    for r in logged:
        if cls is CUP:  # both steps stop after the first epoch past δ: at most num_epochs each
            assert 1 <= r["cup/performance_epochs"] <= 2 and 1 <= r["cup/projection_epochs"] <= 2
        else:
            assert r["policy/kl"] <= delta * (1 + 1e-4)
            assert 0 <= r["trust_region/accepted_step"] <= cls.Config().backtrack_steps
        if cls is CPO:
            assert r["cpo/case"] in (0.0, 1.0, 2.0, 3.0, 4.0)

    # the same run interrupted during its fourth iteration, then resumed: the reference's records exactly
    config = tiny(cls.Config, **settings)
    run_dir = tmp_path / "run"
    interrupt_at_call(monkeypatch, 4, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        runs.train(cls, config, TOY_ENV_ID, run_dir=run_dir, progress=False)
    monkeypatch.undo()
    runs.train(None, run_dir=run_dir, resume=True, progress=False)
    assert records(run_dir) == records(ref_dir)
    assert json.loads((run_dir / "results.json").read_text()) == json.loads((ref_dir / "results.json").read_text())


@pytest.mark.parametrize("cls", [TRPOLag, CUP], ids=lambda c: c.name)
@pytest.mark.slow
def test_trpo_lag_and_cup_keep_one_multiplier_per_budgeted_term(cls):
    # the ascent rule from 0 (CUP's defaults are OmniSafe's Adam from 0.001)
    config = tiny(cls.Config, budgets=("cost/hazard=1000", "cost/edge=0"), lambda_lr=2.0, lambda_optimizer="sgd",
                  lambda_init=0.0)
    trainer = Trainer(cls, config, ToyEnvTwoCosts())
    _, m = trainer.run(trainer.init(jax.random.key(0)), 1)
    edge = float(m["constraint/step_cost/cost/edge"][0, 0])
    assert edge > 0
    assert float(m["multiplier/lagrange/cost/edge"][0, 0]) == pytest.approx(2.0 * edge, rel=1e-5)
    assert float(m["multiplier/lagrange/cost/hazard"][0, 0]) == 0.0
    assert all(np.all(np.isfinite(v)) for v in m.values())


@pytest.mark.slow
def test_crpo_with_per_term_budgets_steps_on_the_violated_terms_cost():
    # hazard's budget is out of reach, edge's is 0 (every edge step is over it; no tolerance, since the toy
    # env's episodes are too short to pass 2): the one TRPO step follows −Â_c of edge, and edge's cost falls
    batch, before, after, metrics = one_update(CRPO, ToyEnvTwoCosts(), budgets=("cost/hazard=1000", "cost/edge=0"),
                                               distance=0.0)
    assert float(batch.violation[0]) < 0 < float(batch.violation[1])
    assert float(metrics["trust_region/accepted_step"]) >= 1
    edge = batch.samples["adv_c"][:, 1]
    assert surrogate(after, batch.samples, edge) < surrogate(before, batch.samples, edge)
