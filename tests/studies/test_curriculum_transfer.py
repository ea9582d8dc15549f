"""Curriculum carries every learner variable across stages (and resumes across a stage boundary);
transfer copies the policy, reward critic and normalizer and re-initialises the rest."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest

from crax import runs
from crax.cli.studies import curriculum_main, transfer_main
from crax.learners import PPO, PPOLag, Trainer
from crax.runs import checkpoint as ckpt
from crax.runs import transfer as run_transfer
from crax.runs.metrics import read_metrics
from crax.studies.curriculum import stage_ids
from crax.studies.transfer import transfer
from tests.learners.conftest import TOY_ENV_ID, tiny

HARDER_ID = "tests.learners.toy_env:ToyEnvHarder"
STAGES = [TOY_ENV_ID, HARDER_ID]
CONFIG = tiny(PPOLag.Config, total_steps=4 * 64, num_evals=1, checkpoint_every=1, lambda_lr=0.5, safety_bound=1.0)


def leaves(tree):
    return [np.asarray(jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x)
            for x in jax.tree.leaves(tree)]


def spy_runs(monkeypatch):
    """Records (input state, output state) of every ``Trainer.run`` call."""
    calls, original = [], Trainer.run

    def run(self, state, n):
        out = original(self, state, n)
        calls.append((self.env, state, out[0]))
        return out

    monkeypatch.setattr(Trainer, "run", run)
    return calls


def test_stage_ids_need_a_task_without_level():
    assert stage_ids("PointGoal") == ["PointGoal1", "PointGoal2", "PointGoal3"]
    with pytest.raises(ValueError, match="without level"):
        stage_ids("PointGoal1")


@pytest.mark.slow
def test_curriculum_carries_learner_and_optimizer_state_into_the_next_stage(tmp_path, monkeypatch):
    calls = spy_runs(monkeypatch)
    result = runs.train(PPOLag, CONFIG, stages=STAGES, run_dir=tmp_path / "c", progress=False)
    assert [type(env).__name__ for env, _, _ in calls] == ["ToyEnv", "ToyEnv", "ToyEnvHarder", "ToyEnvHarder"]
    _, _, end_of_stage_1 = calls[1]
    _, start_of_stage_2, _ = calls[2]
    # policy, critics, normalizer, multipliers and Adam state: the same values, not re-initialised
    for a, b in zip(leaves(end_of_stage_1.model), leaves(start_of_stage_2.model), strict=True):
        np.testing.assert_array_equal(a, b)
    lam = float(start_of_stage_2.model[0]["rule"]["lagrange"][...][0])
    assert lam > 0  # the toy env's cost pushed λ up in stage 1, and stage 2 starts from it
    assert int(start_of_stage_2.iteration[0]) == 2 and int(start_of_stage_2.env_steps[0]) == 128
    # while the envs are the new level's, fresh
    assert not np.array_equal(np.asarray(end_of_stage_1.env.obs), np.asarray(start_of_stage_2.env.obs))

    stages = [r["curriculum/stage"] for r in read_metrics(result.run_dir) if "loss/policy" in r]
    assert stages == [0, 0, 1, 1]
    record = json.loads((result.run_dir / "config.json").read_text())
    assert record["stages"] == STAGES and record["env"] == HARDER_ID
    results = json.loads((result.run_dir / "results.json").read_text())
    assert [(s["env"], s["first_step"], s["last_step"]) for s in results["stages"]] == [
        (TOY_ENV_ID, 1, 128), (HARDER_ID, 129, 256)]


@pytest.mark.slow
def test_curriculum_resumes_exactly_across_the_stage_boundary(tmp_path, monkeypatch):
    whole = runs.train(PPOLag, CONFIG, stages=STAGES, run_dir=tmp_path / "whole", progress=False)
    original, count = Trainer.run, [0]

    def run(self, state, n):
        count[0] += 1
        if count[0] == 3:  # the first call of stage 2
            raise KeyboardInterrupt
        return original(self, state, n)

    monkeypatch.setattr(Trainer, "run", run)
    with pytest.raises(KeyboardInterrupt):
        runs.train(PPOLag, CONFIG, stages=STAGES, run_dir=tmp_path / "cut", progress=False)
    monkeypatch.undo()
    assert ckpt.checkpoints(tmp_path / "cut")[-1][0] == 128  # holds stage 1's envs
    runs.train(None, run_dir=tmp_path / "cut", resume=True, progress=False)

    def records(run_dir):
        return [{k: v for k, v in r.items() if k != "perf/steps_per_second"} for r in read_metrics(run_dir)]

    assert records(tmp_path / "cut") == records(whole.run_dir)


@pytest.mark.slow
def test_curriculum_stages_need_one_observation_size(tmp_path):
    with pytest.raises(ValueError, match="observation size"):
        runs.train(PPO, tiny(PPO.Config), stages=["PointGoal1", "PointVelocity1"], run_dir=tmp_path / "x")


@pytest.mark.slow
def test_transfer_copies_policy_reward_critic_normalizer_and_resets_the_rest(tmp_path):
    config = tiny(PPOLag.Config, total_steps=4 * 64, num_evals=1, lambda_init=0.25)
    result = transfer(PPOLag, config, TOY_ENV_ID, run_dir=tmp_path / "t", progress=False)
    ppo_dir, safe_dir = tmp_path / "t" / "ppo", tmp_path / "t" / "ppo-lag"
    assert result.run_dir == safe_dir
    assert json.loads((ppo_dir / "results.json").read_text())["env_steps"] == 128
    assert json.loads((safe_dir / "config.json").read_text())["init_from"]["run_dir"] == str(ppo_dir)

    # the start of the safe phase, rebuilt the way the runs builds it
    trainer = Trainer(PPOLag, dataclasses.replace(config, total_steps=128), runs.make_env(TOY_ENV_ID))
    fresh = trainer.init(jax.random.split(jax.random.key(config.seed))[0])
    plan = run_transfer.plan_transfer(ppo_dir, run_transfer.INIT_PARTS, trainer)
    start = run_transfer.initial_model(trainer, fresh, plan)
    ppo_trainer = Trainer(PPO, tiny(PPO.Config, total_steps=128, num_evals=1), runs.make_env(TOY_ENV_ID))
    ppo_final = ckpt.load_checkpoint(ppo_dir, ppo_trainer.abstract_state())["state"].model
    for part in ("actor", "reward_critic", "normalizer"):
        for a, b in zip(leaves(start.model[0][part]), leaves(ppo_final[0][part]), strict=True):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(leaves(start.model[0]["cost_critic"]), leaves(fresh.model[0]["cost_critic"]), strict=True):
        np.testing.assert_array_equal(a, b)  # the cost critic is the fresh one, not PPO's
    assert not all(np.array_equal(a, b) for a, b in zip(leaves(start.model[0]["cost_critic"]),
                                                          leaves(ppo_final[0]["cost_critic"]), strict=True))
    assert float(start.model[0]["rule"]["lagrange"][...][0]) == 0.25
    assert all(np.all(x == 0) for x in leaves(start.model[1]["step"]))  # a fresh optimizer

    # run again: both phases are finished
    with pytest.raises(runs.RunComplete):
        transfer(PPOLag, config, TOY_ENV_ID, run_dir=tmp_path / "t", progress=False)


@pytest.mark.slow
def test_transfer_from_an_existing_run_and_its_errors(tmp_path, capsys):
    ppo = runs.train(PPO, tiny(PPO.Config, total_steps=64, num_evals=0), TOY_ENV_ID, run_dir=tmp_path / "p",
                       progress=False)
    flags = ["--num-envs", "8", "--unroll-length", "4", "--batch-size", "4", "--num-minibatches", "4",
             "--num-epochs", "2", "--actor-hidden", "16", "--critic-hidden", "16", "--eval-envs", "4",
             "--num-evals", "1", "--total-steps", "128", "--no-progress"]
    transfer_main(["ppo-lag", "--env", TOY_ENV_ID, "--from", str(ppo.run_dir), "--run-dir", str(tmp_path / "t"),
                   *flags])
    assert "seed 0: return" in capsys.readouterr().out
    assert json.loads((tmp_path / "t" / "ppo-lag" / "results.json").read_text())["env_steps"] == 64
    assert not (tmp_path / "t" / "ppo").exists()

    bigger = [*flags[:-5], "--critic-hidden", "32", "--no-progress"]
    with pytest.raises(SystemExit) as exc:
        transfer_main(["ppo-lag", "--env", TOY_ENV_ID, "--from", str(ppo.run_dir), "--run-dir", str(tmp_path / "u"),
                       *bigger])
    assert exc.value.code == 2 and "reward_critic" in capsys.readouterr().err


class Recorder:
    """Stands in for a training call: records its keyword arguments, returns a run with no seeds."""

    def __init__(self):
        self.kwargs: list[dict] = []

    def __call__(self, *args, **kwargs):
        self.kwargs.append(kwargs)
        return runs.TrainResult(run_dir="fake", learner="ppo-lag", env="fake", config=PPOLag.Config(), env_steps=0,
                                  final=[], evals=[], history=[], trainer=None, state=None)


FLAGS = ["--constraint", "action_energy:weight=0.05", "--sensor", "pose:scale=3", "--no-progress"]
ADDED = {"constraints": {"action_energy": {"weight": 0.05}}, "sensors": {"pose": {"scale": 3}}}


def test_curriculum_and_transfer_take_constraint_and_sensor_flags(tmp_path, monkeypatch):
    record = Recorder()
    monkeypatch.setattr(runs, "train", record)
    curriculum_main(["ppo-lag", "--env", "PointGoal", "--run-dir", str(tmp_path / "c"), *FLAGS])
    assert record.kwargs[-1]["env_kwargs"] == ADDED and record.kwargs[-1]["stages"] == stage_ids("PointGoal")
    monkeypatch.setattr(runs, "complete_run", record)
    transfer_main(["ppo-lag", "--env", "PointGoal3", "--run-dir", str(tmp_path / "t"), *FLAGS])
    assert [k["env_kwargs"] for k in record.kwargs[-2:]] == [ADDED, ADDED]  # the PPO phase and the safe phase


@pytest.mark.parametrize("main", [curriculum_main, transfer_main])
def test_component_flags_on_an_env_class_are_refused(main, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["ppo-lag", "--env", TOY_ENV_ID, "--constraint", "action_energy", "--no-progress"])
    assert exc.value.code == 2 and "not to the env class" in capsys.readouterr().err
