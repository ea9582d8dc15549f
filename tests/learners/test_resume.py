"""Exact resume: a run interrupted by SIGINT, SIGTERM or SIGKILL (between checkpoints, or just after
one) and resumed logs the same metrics, iteration by iteration, as the uninterrupted run; finished and
extended runs, corrupt checkpoints and TensorBoard across resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from crax import runs
from crax.cli import train as train_cli
from crax.learners import PPOLag, Trainer
from crax.runs import checkpoint as ckpt
from crax.runs.metrics import read_metrics
from tests.learners.conftest import TOY_ENV_ID, tiny

STEPS_PER_ITER = 64
CONFIG = tiny(PPOLag.Config, total_steps=6 * STEPS_PER_ITER, num_evals=2, checkpoint_every=2, lambda_lr=0.5)
ROOT = Path(__file__).resolve().parents[2]


def records(run_dir: Path) -> dict[tuple[int, int], dict]:
    """Every logged record by (step, seed), without the wall-clock throughput."""
    out = {}
    for r in read_metrics(run_dir):
        r = {k: v for k, v in r.items() if k != "perf/steps_per_second"}
        out.setdefault((r["step"], r["seed"]), {}).update(r)
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return runs.train(PPOLag, CONFIG, TOY_ENV_ID, run_dir=tmp_path_factory.mktemp("ref") / "run", progress=False)


def interrupt_at_call(monkeypatch, call: int, exc: type[BaseException]):
    """Makes the ``call``-th ``Trainer.run`` raise ``exc`` (as a Ctrl-C arriving during that iteration)."""
    original, count = Trainer.run, [0]

    def run(self, state, n):
        count[0] += 1
        if count[0] == call:
            raise exc()
        return original(self, state, n)

    monkeypatch.setattr(Trainer, "run", run)


@pytest.mark.slow
def test_sigint_writes_a_checkpoint_and_resume_matches(tmp_path, monkeypatch, capsys, reference):
    run_dir = tmp_path / "run"
    interrupt_at_call(monkeypatch, 4, KeyboardInterrupt)  # three iterations done, last periodic checkpoint at 2
    with pytest.raises(KeyboardInterrupt):
        runs.train(PPOLag, CONFIG, TOY_ENV_ID, run_dir=run_dir, progress=False)
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER, 3 * STEPS_PER_ITER]
    err = capsys.readouterr().err
    assert f"crax train --resume {run_dir}" in err and "iteration 3" in err
    monkeypatch.undo()

    runs.train(None, run_dir=run_dir, resume=True, progress=False)
    assert records(run_dir) == records(reference.run_dir)
    assert json.loads((run_dir / "results.json").read_text()) == json.loads(
        (reference.run_dir / "results.json").read_text())


def run_killed(run_dir: Path, patch: str, **overrides) -> subprocess.CompletedProcess:
    """Trains CONFIG (with ``overrides``) in a fresh process after running ``patch``, a snippet that
    plants the fault (``os``, ``signal``, ``ckpt``, ``runs`` and ``Trainer`` are imported)."""
    fields = {"total_steps": 6 * STEPS_PER_ITER, "num_evals": 2, "checkpoint_every": 2, "lambda_lr": 0.5, **overrides}
    script = "\n".join([
        "import os, signal",
        "from crax import runs",
        "from crax.cli import train as train_cli",
        "from crax.runs import checkpoint as ckpt",
        "from crax.learners import PPOLag, Trainer",
        "from tests.learners.conftest import tiny",
        textwrap.dedent(patch),
        f"config = tiny(PPOLag.Config, **{fields!r})",
        f"train_cli.run_or_exit('crax train', runs.train, PPOLag, config, {TOY_ENV_ID!r}, run_dir={str(run_dir)!r},"
        " progress=False)",
    ])
    cache = {"JAX_COMPILATION_CACHE_DIR": str(ROOT / ".jax_cache"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5"}
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **cache, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow  # a training process killed, then resumed in this one
@pytest.mark.parametrize("kill_at", [3, 6], ids=["after-a-mid-run-checkpoint", "after-the-final-checkpoint"])
def test_sigkill_just_after_a_checkpoint_loses_no_metrics(tmp_path, reference, kill_at):
    """A checkpoint on disk implies the records up to its step are on disk (DECISIONS 44): killed right
    after the checkpoint of an evaluated iteration (3) or of the last one (6), nothing is lost."""
    run_dir = tmp_path / "run"
    proc = run_killed(run_dir, f"""
        save = ckpt.save_checkpoint
        def save_then_die(run_dir, state, *, env_steps, iteration, **kw):
            path = save(run_dir, state, env_steps=env_steps, iteration=iteration, **kw)
            if iteration == {kill_at}:
                os.kill(os.getpid(), signal.SIGKILL)
            return path
        ckpt.save_checkpoint = save_then_die
    """, checkpoint_every=3)
    assert proc.returncode == -9, proc.stderr
    assert ckpt.checkpoints(run_dir)[-1][0] == kill_at * STEPS_PER_ITER
    assert not (run_dir / "results.json").exists()

    if kill_at == 6:
        with pytest.raises(runs.RunComplete, match="written now"):
            runs.train(None, run_dir=run_dir, resume=True, progress=False)
    else:
        runs.train(None, run_dir=run_dir, resume=True, progress=False)
    assert records(run_dir) == records(reference.run_dir)
    results = json.loads((run_dir / "results.json").read_text())
    assert [e["step"] for e in results["evals"]] == [3 * STEPS_PER_ITER, 6 * STEPS_PER_ITER]
    assert results == json.loads((reference.run_dir / "results.json").read_text())


@pytest.mark.slow  # a training process terminated, then resumed in this one
def test_sigterm_is_handled_like_ctrl_c(tmp_path, reference):
    run_dir = tmp_path / "run"
    proc = run_killed(run_dir, """
        original, count = Trainer.run, [0]
        def run(self, state, n):
            count[0] += 1
            if count[0] == 4:  # as a scheduler's SIGTERM arriving during iteration 4
                os.kill(os.getpid(), signal.SIGTERM)
            return original(self, state, n)
        Trainer.run = run
    """)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "terminated (SIGTERM)" in proc.stderr and f"crax train --resume {run_dir}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert ckpt.checkpoints(run_dir)[-1][0] == 3 * STEPS_PER_ITER  # the last finished iteration's

    runs.train(None, run_dir=run_dir, resume=True, progress=False)
    assert records(run_dir) == records(reference.run_dir)


@pytest.mark.slow  # a training process killed, then resumed in this one
def test_sigkill_between_checkpoints_then_resume_matches(tmp_path, reference):
    run_dir = tmp_path / "run"
    script = textwrap.dedent(f"""
        import os, signal
        from crax import runs
        from crax.learners import PPOLag, Trainer
        from tests.learners.conftest import tiny
        original, count = Trainer.run, [0]
        def run(self, state, n):
            count[0] += 1
            if count[0] == 4:  # iteration 3 is logged, the newest checkpoint is iteration 2's
                os.kill(os.getpid(), signal.SIGKILL)
            return original(self, state, n)
        Trainer.run = run
        config = tiny(PPOLag.Config, total_steps={6 * STEPS_PER_ITER}, num_evals=2, checkpoint_every=2, lambda_lr=0.5)
        runs.train(PPOLag, config, {TOY_ENV_ID!r}, run_dir={str(run_dir)!r}, progress=False)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -9, proc.stderr
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER]
    assert max(s for s, _ in records(run_dir)) == 3 * STEPS_PER_ITER  # logged past the checkpoint

    train_cli.train_main(["--resume", str(run_dir), "--no-progress"])
    assert records(run_dir) == records(reference.run_dir)
    # TensorBoard: the killed session's step-3 point is dropped, the resumed one kept; none lost at the resume step
    acc = EventAccumulator(str(run_dir / "tb" / "seed_0"))
    acc.Reload()
    assert [e.step for e in acc.Scalars("loss/policy")] == [STEPS_PER_ITER * i for i in range(1, 7)]


@pytest.mark.slow
def test_finished_run_is_reported_complete_and_extended_on_request(tmp_path, reference, capsys):
    run_dir = tmp_path / "run"
    runs.train(PPOLag, tiny(PPOLag.Config, total_steps=2 * STEPS_PER_ITER, num_evals=1), TOY_ENV_ID,
                 run_dir=run_dir, progress=False)
    before = (run_dir / "results.json").read_bytes()
    with pytest.raises(runs.RunComplete, match="is complete"):
        runs.train(None, run_dir=run_dir, resume=True, progress=False)
    with pytest.raises(SystemExit) as exc:
        train_cli.train_main(["--resume", str(run_dir), "--no-progress"])
    assert exc.value.code == 0 and "is complete" in capsys.readouterr().out
    assert (run_dir / "results.json").read_bytes() == before  # the result survives
    (run_dir / "results.json").unlink()  # as if killed between the last checkpoint and writing the results
    with pytest.raises(runs.RunComplete, match="written now"):
        runs.train(None, run_dir=run_dir, resume=True, progress=False)
    assert json.loads((run_dir / "results.json").read_text()) == json.loads(before)

    train_cli.train_main(["--resume", str(run_dir), "--total-steps", "3.84e2", "--no-progress"])  # 6 iterations
    results = json.loads((run_dir / "results.json").read_text())
    assert results["env_steps"] == 6 * STEPS_PER_ITER and len(results["evals"]) == 2  # the first run's eval kept
    assert [r["step"] for r in read_metrics(run_dir) if "loss/policy" in r] == [STEPS_PER_ITER * i for i in range(1, 7)]


def test_corrupt_newest_checkpoint_falls_back_with_a_warning(tmp_path):
    run_dir = tmp_path / "run"
    runs.train(PPOLag, tiny(PPOLag.Config, total_steps=4 * STEPS_PER_ITER, num_evals=0), TOY_ENV_ID,
                 run_dir=run_dir, progress=False)
    (older, _), (newest, newest_path) = ckpt.checkpoints(run_dir)
    newest_path.write_bytes(newest_path.read_bytes()[:100])  # a copy cut short
    template = Trainer(PPOLag, tiny(PPOLag.Config), runs.make_env(TOY_ENV_ID)).abstract_state()
    with pytest.warns(UserWarning) as caught:
        restored = ckpt.load_checkpoint(run_dir, template)
    message = str(caught[0].message)
    assert restored["env_steps"] == older and newest_path.name in message and f"step_{older}" in message
    runs.evaluate(run_dir, episodes=2)  # eval uses the readable one too


@pytest.mark.slow
def test_extending_a_finished_run_retracts_its_results_until_it_finishes(tmp_path, monkeypatch, capsys):
    from crax.studies import read_result

    run_dir = tmp_path / "run"
    runs.train(PPOLag, tiny(PPOLag.Config, total_steps=2 * STEPS_PER_ITER, num_evals=1), TOY_ENV_ID,
                 run_dir=run_dir, progress=False)
    config_before = (run_dir / ckpt.CONFIG_FILE).read_bytes()
    with pytest.raises(SystemExit) as exc:  # fewer steps than trained: nothing to do, and nothing rewritten
        train_cli.train_main(["--resume", str(run_dir), "--total-steps", "64", "--no-progress"])
    assert exc.value.code == 0 and "asks for no more" in capsys.readouterr().out
    assert (run_dir / ckpt.CONFIG_FILE).read_bytes() == config_before

    interrupt_at_call(monkeypatch, 1, KeyboardInterrupt)  # the extension stops before its first new iteration
    with pytest.raises(SystemExit) as exc:
        train_cli.train_main(["--resume", str(run_dir), "--total-steps", "256", "--no-progress"])
    assert exc.value.code == 130
    assert read_result(run_dir) is None  # `crax table` lists it as not finished, not with the 128-step result
    assert ckpt.read_config(run_dir)["config"]["total_steps"] == 256  # a plain --resume finishes the extension
    monkeypatch.undo()
    capsys.readouterr()

    train_cli.train_main(["--resume", str(run_dir), "--no-progress"])
    assert read_result(run_dir).env_steps == 4 * STEPS_PER_ITER
    out = capsys.readouterr().out  # the final evaluation of both policies, the judged one first
    assert "seed 0: return" in out and "stochastic policy)" in out and "deterministic policy: return" in out


@pytest.mark.parametrize("learner, stored", [
    ("ppo-pid", {"integral_max": 1.0, "derivative_ema": 0.95, "kp": 10.0}),
    ("focops", {"nu_init": 0.1, "nu_lr": 1.0, "nu_max": 100.0}),
])
def test_a_run_stored_before_a_rule_changed_is_refused_saying_why(learner, stored):
    from crax.runs import checkpoint as ckpt
    from crax.runs.envs import get_learner

    with pytest.raises(ValueError, match=r"stored by an older crax .* no longer has: .*\(docs/DECISIONS.md, decision (77|80)\)"):
        ckpt.config_from_dict(get_learner(learner).Config, stored)


def test_a_checkpoint_from_before_the_rules_were_components_resumes(tmp_path):
    """A checkpoint that stored PPO-Lag's λ on the learner (``model/0/lagrange``) restores into today's
    learner, whose rule holds it (``model/0/rule/lagrange``); a name found under neither is still refused."""
    import numpy as np

    template = {"model": {"0": {"rule": {"lagrange": {"value": np.zeros((3,), np.float32)}},
                                "actor": {"value": np.zeros((2,), np.float32)}}}}
    old = {"model": {"0": {"lagrange": {"value": np.full((3,), 0.7, np.float32)},
                           "actor": {"value": np.ones((2,), np.float32)}}}}
    ckpt.save_checkpoint(tmp_path, old, env_steps=10, iteration=1)
    restored = ckpt.load_checkpoint(tmp_path, template)["state"]
    np.testing.assert_allclose(restored["model"]["0"]["rule"]["lagrange"]["value"], 0.7)
    np.testing.assert_allclose(restored["model"]["0"]["actor"]["value"], 1.0)
    template["model"]["0"]["rule"]["integral"] = {"value": np.zeros((3,), np.float32)}
    with pytest.raises(ckpt.CheckpointMismatch, match="rule/integral"):
        ckpt.load_checkpoint(tmp_path, template)


def test_a_checkpoint_from_before_episode_cost_peak_resumes_with_a_fresh_peak(tmp_path):
    """A checkpoint written before ``EpisodeStats`` tracked the largest step cost lacks its
    ``episode/cost_peak`` leaves: they restore as zeros (an episode's start); any other missing leaf is refused."""
    import numpy as np

    episode = {"cost": np.full((4,), 2.0, np.float32), "cost_peak": np.ones((4,), np.float32)}
    template = {"env": {"info": {"episode": episode, "autoreset_pool": {"info": {"episode": dict(episode)}}}}}
    old = {"env": {"info": {"episode": {"cost": np.full((4,), 3.0, np.float32)},
                            "autoreset_pool": {"info": {"episode": {"cost": np.zeros((4,), np.float32)}}}}}}
    ckpt.save_checkpoint(tmp_path, old, env_steps=10, iteration=1)
    restored = ckpt.load_checkpoint(tmp_path, template)["state"]["env"]["info"]
    np.testing.assert_array_equal(restored["episode"]["cost"], 3.0)
    np.testing.assert_array_equal(restored["episode"]["cost_peak"], 0.0)
    np.testing.assert_array_equal(restored["autoreset_pool"]["info"]["episode"]["cost_peak"], 0.0)
    template["env"]["info"]["episode"]["length"] = np.zeros((4,), np.float32)
    with pytest.raises(ckpt.CheckpointMismatch, match="episode/length"):
        ckpt.load_checkpoint(tmp_path, template)
