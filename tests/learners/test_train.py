"""End-to-end runs on the toy env: the CLI entry points, run folders, resume, seeds and error paths."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from crax import runs
from crax.cli import eval as eval_cli
from crax.cli import train as train_cli
from crax.learners import PPO, TRPO, PPOLag, Trainer
from crax.runs import checkpoint as ckpt
from crax.runs.metrics import read_metrics
from tests import trees
from tests.learners.conftest import PPO_FAMILY, TINY, TOY_ENV_ID, tiny
from tests.learners.toy_env import ToyEnv

STEPS_PER_ITER = 64  # TINY: 8 envs × 8 steps


def tiny_flags(**overrides) -> list[str]:
    values = {**TINY, **overrides}
    flags = []
    for k, v in values.items():
        flags.append("--" + k.replace("_", "-"))
        flags.extend(str(x) for x in v) if isinstance(v, tuple) else flags.append(str(v))
    return flags


def scalars(run_dir: Path, seed: int, tag: str) -> list[tuple[int, float]]:
    acc = EventAccumulator(str(run_dir / "tb" / f"seed_{seed}"))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_train_main_writes_run_folder_and_resume_continues(tmp_path, capsys):
    run_dir = tmp_path / "run"
    train_cli.train_main(["ppo-lag", "--env", TOY_ENV_ID, "--run-dir", str(run_dir), "--no-progress",
                       "--total-steps", str(4 * STEPS_PER_ITER), "--lambda-lr", "0.5", *tiny_flags()])
    out = capsys.readouterr().out
    assert "seed 0: return" in out and str(run_dir) in out

    record = json.loads((run_dir / "config.json").read_text())
    assert record["learner"] == "ppo-lag" and record["env"] == TOY_ENV_ID
    assert record["config"]["lambda_lr"] == 0.5 and record["config"]["total_steps"] == 4 * STEPS_PER_ITER
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER, 4 * STEPS_PER_ITER]
    tags = EventAccumulator(str(run_dir / "tb" / "seed_0")).Reload().Tags()["scalars"]
    for tag in ("episode/return", "episode/cost", "episode/length", "episode/cost/hazard", "episode/reward/progress",
                "multiplier/lagrange", "loss/policy",
                "loss/value_reward", "loss/value_cost", "policy/kl", "policy/entropy", "perf/steps_per_second",
                "eval/stochastic/return", "eval/stochastic/cost", "eval/stochastic/cost_std",
                "eval/deterministic/return", "eval/deterministic/cost", "eval/deterministic/return_std"):
        assert tag in tags, tag
    assert [s for s, _ in scalars(run_dir, 0, "loss/policy")] == [STEPS_PER_ITER * i for i in (1, 2, 3, 4)]

    # Interrupt after the second checkpoint: drop the newest one, as if the run died before writing it.
    (run_dir / "checkpoints" / f"step_{4 * STEPS_PER_ITER}.msgpack").unlink()
    train_cli.train_main(["--resume", str(run_dir), "--total-steps", str(6 * STEPS_PER_ITER), "--no-progress"])
    records = [r for r in read_metrics(run_dir) if "loss/policy" in r]
    assert [r["step"] for r in records] == [STEPS_PER_ITER * i for i in range(1, 7)]  # no gap, no duplicate
    assert [s for s, _ in ckpt.checkpoints(run_dir)][-1] == 6 * STEPS_PER_ITER
    assert json.loads((run_dir / "config.json").read_text())["config"]["total_steps"] == 6 * STEPS_PER_ITER
    results = json.loads((run_dir / "results.json").read_text())
    assert results["env_steps"] == 6 * STEPS_PER_ITER and len(results["final"]) == 1
    step_costs = [r["constraint/step_cost"] for r in read_metrics(run_dir) if "constraint/step_cost" in r]
    assert len(step_costs) == 6 and results["final"][0]["cost_rate"] == pytest.approx(np.mean(step_costs))
    assert {"over_bound", "cost_cvar", "costly_step_fraction"} <= set(results["final"][0]["stochastic"])

    eval_cli.eval_main([str(run_dir), "--episodes", "3"])
    out = capsys.readouterr().out
    assert "mean return" in out and ("-> safe" in out or "-> not safe" in out)
    assert "over bound" in out and "CVaR0.1" in out and "costly steps" in out


def test_resume_restores_learner_state_exactly(tmp_path):
    config = tiny(PPOLag.Config, total_steps=2 * STEPS_PER_ITER, num_evals=0)
    first = runs.train(PPOLag, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)
    trainer = Trainer(PPOLag, config, ToyEnv())
    restored = ckpt.load_checkpoint(tmp_path / "r", trainer.abstract_state())
    trees.assert_equal(first.state, restored["state"])
    assert restored["env_steps"] == 2 * STEPS_PER_ITER and restored["iteration"] == 2


@pytest.mark.slow
def test_vmapped_seeds_train_independently(tmp_path):
    config = tiny(PPOLag.Config, total_steps=3 * STEPS_PER_ITER, num_seeds=3)
    result = runs.train("ppo-lag", config, ToyEnv(), run_dir=tmp_path / "s", progress=False)
    assert len(result.final) == 3 and len(result.evals[-1]["stochastic"]["return"]) == 3
    losses = {s: [r["loss/policy"] for r in result.history if r["seed"] == s and "loss/policy" in r] for s in range(3)}
    assert all(len(v) == 3 for v in losses.values())
    assert len({tuple(v) for v in losses.values()}) == 3
    kernels = [np.asarray(result.trainer.learner(result.state, s).actor.net.layers[0].kernel[...]) for s in range(3)]
    assert not np.allclose(kernels[0], kernels[1]) and not np.allclose(kernels[1], kernels[2])
    for s in range(3):
        assert scalars(result.run_dir, s, "loss/policy")


@pytest.fixture(scope="module")
def ppo_baseline(tmp_path_factory):
    return _learn(PPO, tmp_path_factory.mktemp("ppo-baseline"))


LEARNING_SEEDS = 3
"""Seeds of the learning runs below, judged on their mean: one seed's final evaluation catches a Lagrangian
multiplier at one phase of its swing (PPO-Lag at seed 0, centred cost advantages: C 10.5 at the last
evaluation, 2.6, 0.4 and 1.3 at seeds 1-3; decision 76)."""


def _learning_config(cls):
    return tiny(cls.Config, num_envs=32, batch_size=16, unroll_length=8, total_steps=512 * 150, safety_bound=2.0,
                eval_envs=32, learning_rate=3e-3, checkpoint_every=1000, num_seeds=LEARNING_SEEDS)


def mean_final(result, key: str) -> float:
    """The mean over seeds of the final evaluation's ``key``."""
    return float(np.mean([f[key] for f in result.final]))


def _learn(cls, root: Path):
    """A learning run of ``cls`` in a fresh folder under ``root`` (a test's own temporary folder)."""
    return runs.train(cls, _learning_config(cls), ToyEnv(), run_dir=root / f"learn-{cls.name}", progress=False)


MULTIPLIERS = {"ppo-lag": {"lagrange"}, "ppo-pid": {"lagrange", "integral", "p_ema", "d_ema"},
               "p3o": {"kappa"}, "focops": {"lagrange"}, "trpo-lag": {"lagrange"}, "cup": {"lagrange"},
               "trpo-pid": {"lagrange", "integral", "p_ema", "d_ema"},
               "cppo-pid": {"lagrange", "integral", "p_ema", "d_ema"}, "rcpo": {"lagrange"}, "pdo": {"lagrange"},
               "ipo": {"ipo_penalty"}, "ppo-simmer-pid": {"simmer_budget"}, "trpo-simmer-pid": {"simmer_budget"}}
"""The multiplier state each learner logs (``multiplier/<name>``); the others log none."""


def check_one_program_and_its_metrics(result, name: str) -> None:
    """A learning run compiled one iteration program, which every call ran; every iteration logged
    finite metrics, the learner's multipliers among them, at the env steps it reached."""
    assert list(result.trainer._compiled) == [1]
    config = result.trainer.config
    rows = [r for r in result.history if "constraint/violation" in r and r["seed"] == 0]
    iterations = config.total_steps // config.steps_per_iteration
    assert [r["step"] for r in rows] == [(i + 1) * config.steps_per_iteration for i in range(iterations)]
    for r in rows:
        assert all(np.isfinite(v) for k, v in r.items() if k not in ("step", "seed")), r["step"]
    assert {k.split("/", 1)[1] for r in rows for k in r if k.startswith("multiplier/")} == MULTIPLIERS.get(name, set())


@pytest.mark.slow  # PPO's learning run (76,800 steps): the baseline of the test below
def test_ppo_learns_through_the_hazard_band_in_one_program(ppo_baseline):
    check_one_program_and_its_metrics(ppo_baseline, "ppo")
    assert mean_final(ppo_baseline, "cost") > 4.0  # the reward drives PPO through the hazard band
    assert mean_final(ppo_baseline, "return") > 4.0  # and PPO learned (random policy: ~0)


BUDGET_STATE = {"ppo-saute", "trpo-saute", "ppo-simmer-pid", "trpo-simmer-pid"}
"""Learners on Saute's budget state judged on their cost alone here: once an episode's budget is spent every
step pays the penalty, so the pit, which ends the episode, becomes worth reaching, and whether a run learns
the reward first depends on its seed (seeds 0, 1, 2: ppo-saute's return 1.16, −4.38, −0.46, trpo-saute's
−2.7, −1.42, 0.69, ppo-simmer-pid's −2.07, 5.53, −2.3; the last two's costs 0.25 to 0.53, PPO's over 4)."""


@pytest.mark.slow  # learning runs: 76,800 steps per learner, and PPO's for the baseline
@pytest.mark.parametrize("name", [c.name for c in PPO_FAMILY if c not in (PPO, TRPO)])  # the unconstrained ones
def test_safe_learners_cut_cost_below_ppo(name, ppo_baseline, tmp_path):
    result = _learn(runs.get_learner(name), tmp_path)
    try:
        check_one_program_and_its_metrics(result, name)
        assert mean_final(ppo_baseline, "cost") > 4.0  # the reward drives PPO through the hazard band
        assert mean_final(ppo_baseline, "return") > 4.0  # and PPO learned (random policy: ~0)
        assert mean_final(result, "cost") < 0.5 * mean_final(ppo_baseline, "cost")
        if name not in BUDGET_STATE:
            assert mean_final(result, "return") > 1.0  # learned (random: ~0); judged on the stochastic policy
    finally:
        shutil.rmtree(result.run_dir, ignore_errors=True)


@pytest.mark.slow  # the installed console script in two fresh processes
def test_console_script_trains(tmp_path):
    script = Path(sys.executable).parent / "crax"
    if not script.exists():
        pytest.skip("the crax console script is not installed in this environment")
    run_dir = tmp_path / "cli"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([str(script), "train", "ppo", "--env", TOY_ENV_ID, "--run-dir", str(run_dir),
                           "--no-progress", "--total-steps", str(STEPS_PER_ITER), *tiny_flags(checkpoint_every=1)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ckpt.checkpoints(run_dir) and list((run_dir / "tb" / "seed_0").glob("events.out.tfevents.*"))
    proc = subprocess.run([str(script), "train", "nonsense", "--env", TOY_ENV_ID], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 2 and "nonsense" in proc.stderr and "Traceback" not in proc.stderr


# ---- error paths ----------------------------------------------------------------------------------


def test_unknown_learner_name_lists_choices(capsys):
    with pytest.raises(ValueError, match="valid choices: .*ppo-lag"):
        runs.get_learner("ppo-lagrange")
    with pytest.raises(SystemExit) as exc:
        train_cli.train_main(["ppo-lagrange", "--env", TOY_ENV_ID])
    assert exc.value.code == 2
    assert "ppo-lag" in capsys.readouterr().err


@pytest.mark.parametrize("field, value, message", [
    ("num_envs", 0, "num_envs"),
    ("batch_size", 3, "multiple of num_envs"),
    ("discounting", 1.5, "discounting"),
    ("total_steps", -1, "total_steps"),
])
def test_bad_config_values_raise_value_error(field, value, message):
    with pytest.raises(ValueError, match=message):
        tiny(PPOLag.Config, **{field: value})


def test_bad_config_flag_exits_cleanly(capsys):
    with pytest.raises(SystemExit) as exc:
        train_cli.train_main(["ppo-lag", "--env", TOY_ENV_ID, "--batch-size", "3"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        train_cli.train_main(["ppo-lag", "--env", TOY_ENV_ID, "--lambda-learning-rate", "1.0"])
    assert "Traceback" not in capsys.readouterr().err


def test_unknown_field_in_stored_config(tmp_path):
    with pytest.raises(ValueError, match="unknown config field.*bogus"):
        ckpt.config_from_dict(PPOLag.Config, {"bogus": 1})
    with pytest.raises(ValueError, match="learner 'ppo' takes a PPOConfig, got PPOLagConfig"):
        runs.train(PPO, tiny(PPOLag.Config), ToyEnv(), run_dir=tmp_path / "x")


def test_train_without_a_learner_lists_the_learners(tmp_path):
    with pytest.raises(ValueError, match="train needs a learner .* unless resume=True; valid learners: .*ppo-lag"):
        runs.train(None, None, ToyEnv(), run_dir=tmp_path / "y")
    assert not (tmp_path / "y").exists()


def test_missing_and_corrupt_checkpoints(tmp_path, capsys):
    config = tiny(PPO.Config, total_steps=STEPS_PER_ITER, num_evals=0)
    run_dir = tmp_path / "r"
    runs.train(PPO, config, TOY_ENV_ID, run_dir=run_dir, progress=False)
    (path,) = [p for _, p in ckpt.checkpoints(run_dir)]

    path.write_bytes(b"\x93not a checkpoint")
    with pytest.raises(ValueError, match="corrupt"):
        runs.train(None, run_dir=run_dir, resume=True, progress=False)
    with pytest.raises(SystemExit):
        eval_cli.eval_main([str(run_dir)])
    err = capsys.readouterr().err
    assert "corrupt" in err and "Traceback" not in err

    path.unlink()
    with pytest.raises(ValueError, match="no checkpoint"):
        runs.evaluate(run_dir)
    with pytest.raises(ValueError, match="does not exist"):
        runs.train(None, run_dir=tmp_path / "nowhere", resume=True)
    with pytest.raises(ValueError, match="not a crax run folder"):
        runs.evaluate(tmp_path)
    with pytest.raises(ValueError, match="already holds a run"):
        runs.train(PPO, config, ToyEnv(), run_dir=run_dir)


def test_checkpoint_of_another_config_is_rejected(tmp_path):
    config = tiny(PPO.Config, total_steps=STEPS_PER_ITER, num_evals=0)
    runs.train(PPO, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)
    bigger = Trainer(PPO, tiny(PPO.Config, critic_hidden=(32,)), ToyEnv())
    with pytest.raises(ValueError, match="does not match"):
        ckpt.load_checkpoint(tmp_path / "r", bigger.abstract_state())


@pytest.mark.slow
def test_progress_lines_when_not_a_terminal(tmp_path, capsys):
    """Without a terminal (capsys), training prints a plain line every 10 iterations and at the end."""
    run_dir = tmp_path / "run"
    train_cli.train_main(["ppo-lag", "--env", TOY_ENV_ID, "--run-dir", str(run_dir), "--iterations-per-call", "1",
                       "--total-steps", str(12 * STEPS_PER_ITER), "--lambda-lr", "0.5", *tiny_flags()])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "steps/s" in ln]
    assert [ln.split("(iteration ")[1].split(")")[0] for ln in lines] == ["10", "12"]
    records = {r["step"]: r for r in read_metrics(run_dir) if "multiplier/lagrange" in r}
    for line, it in zip(lines, (10, 12), strict=True):
        assert line.startswith("ppo-lag ") and f"step {it * STEPS_PER_ITER:,}/{12 * STEPS_PER_ITER:,}" in line
        shown = float(line.split("lagrange ")[1].split()[0])
        assert shown == pytest.approx(records[it * STEPS_PER_ITER]["multiplier/lagrange"], abs=0.006)

    train_cli.train_main(["ppo", "--env", TOY_ENV_ID, "--run-dir", str(tmp_path / "quiet"), "--no-progress",
                       "--total-steps", str(2 * STEPS_PER_ITER), *tiny_flags()])
    assert "steps/s" not in capsys.readouterr().out


def test_complete_run_refuses_to_continue_a_run_with_other_settings(tmp_path):
    # a sweep's cell resumed after a learner default changed must not continue under the new default
    from crax.learners import CPO

    started = tiny(CPO.Config)
    record = {"learner": "cpo", "env": TOY_ENV_ID, "env_kwargs": {},
              "config": {k: v for k, v in dataclasses.asdict(started).items() if k != "constraint_value"}}  # stored before the field existed: it ran per-step
    (tmp_path / ckpt.CONFIG_FILE).write_text(json.dumps(record))
    (tmp_path / ckpt.CHECKPOINT_DIR).mkdir()
    (tmp_path / ckpt.CHECKPOINT_DIR / "step_64.msgpack").write_bytes(b"")
    with pytest.raises(ValueError, match=r"other settings \(constraint_value: stored 'per-step', asked 'episode'\)"
                                         r".*crax train --resume"):
        runs.complete_run("cpo", started, TOY_ENV_ID, tmp_path)
    assert (tmp_path / ckpt.CONFIG_FILE).exists()  # nothing was removed or rewritten

