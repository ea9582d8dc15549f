"""Exact resume: a run interrupted by SIGINT or SIGKILL and resumed logs the same metrics, iteration by
iteration, as the uninterrupted run; finished runs, corrupt checkpoints and TensorBoard across resumes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from crax import checkpoint as ckpt
from crax import runner
from crax.learners import PPOLag, Trainer
from crax.logging import read_metrics
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
    return runner.train(PPOLag, CONFIG, TOY_ENV_ID, run_dir=tmp_path_factory.mktemp("ref") / "run", progress=False)


def interrupt_at_call(monkeypatch, call: int, exc: type[BaseException]):
    """Makes the ``call``-th ``Trainer.run`` raise ``exc`` (as a Ctrl-C arriving during that iteration)."""
    original, count = Trainer.run, [0]

    def run(self, state, n):
        count[0] += 1
        if count[0] == call:
            raise exc()
        return original(self, state, n)

    monkeypatch.setattr(Trainer, "run", run)


def test_sigint_writes_a_checkpoint_and_resume_matches(tmp_path, monkeypatch, capsys, reference):
    run_dir = tmp_path / "run"
    interrupt_at_call(monkeypatch, 4, KeyboardInterrupt)  # three iterations done, last periodic checkpoint at 2
    with pytest.raises(KeyboardInterrupt):
        runner.train(PPOLag, CONFIG, TOY_ENV_ID, run_dir=run_dir, progress=False)
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER, 3 * STEPS_PER_ITER]
    err = capsys.readouterr().err
    assert f"crax train --resume {run_dir}" in err and "iteration 3" in err
    monkeypatch.undo()

    runner.train(None, run_dir=run_dir, resume=True, progress=False)
    assert records(run_dir) == records(reference.run_dir)
    assert json.loads((run_dir / "results.json").read_text()) == json.loads(
        (reference.run_dir / "results.json").read_text())


def test_sigkill_between_checkpoints_then_resume_matches(tmp_path, reference):
    run_dir = tmp_path / "run"
    script = textwrap.dedent(f"""
        import os, signal
        from crax import runner
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
        runner.train(PPOLag, config, {TOY_ENV_ID!r}, run_dir={str(run_dir)!r}, progress=False)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -9, proc.stderr
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER]
    assert max(s for s, _ in records(run_dir)) == 3 * STEPS_PER_ITER  # logged past the checkpoint

    runner.train_main(["--resume", str(run_dir), "--no-progress"])
    assert records(run_dir) == records(reference.run_dir)
    # TensorBoard: the killed session's step-3 point is dropped, the resumed one kept; none lost at the resume step
    acc = EventAccumulator(str(run_dir / "tb" / "seed_0"))
    acc.Reload()
    assert [e.step for e in acc.Scalars("loss/policy")] == [STEPS_PER_ITER * i for i in range(1, 7)]


def test_finished_run_is_reported_complete_and_extended_on_request(tmp_path, reference, capsys):
    run_dir = tmp_path / "run"
    runner.train(PPOLag, tiny(PPOLag.Config, total_steps=2 * STEPS_PER_ITER, num_evals=1), TOY_ENV_ID,
                 run_dir=run_dir, progress=False)
    before = (run_dir / "results.json").read_bytes()
    with pytest.raises(runner.RunComplete, match="is complete"):
        runner.train(None, run_dir=run_dir, resume=True, progress=False)
    with pytest.raises(SystemExit) as exc:
        runner.train_main(["--resume", str(run_dir), "--no-progress"])
    assert exc.value.code == 0 and "is complete" in capsys.readouterr().out
    assert (run_dir / "results.json").read_bytes() == before  # the result survives
    (run_dir / "results.json").unlink()  # as if killed between the last checkpoint and writing the results
    with pytest.raises(runner.RunComplete, match="written now"):
        runner.train(None, run_dir=run_dir, resume=True, progress=False)
    assert json.loads((run_dir / "results.json").read_text()) == json.loads(before)

    runner.train_main(["--resume", str(run_dir), "--total-steps", "3.84e2", "--no-progress"])  # 6 iterations
    results = json.loads((run_dir / "results.json").read_text())
    assert results["env_steps"] == 6 * STEPS_PER_ITER and len(results["evals"]) == 2  # the first run's eval kept
    assert [r["step"] for r in read_metrics(run_dir) if "loss/policy" in r] == [STEPS_PER_ITER * i for i in range(1, 7)]


def test_corrupt_newest_checkpoint_falls_back_with_a_warning(tmp_path):
    run_dir = tmp_path / "run"
    runner.train(PPOLag, tiny(PPOLag.Config, total_steps=4 * STEPS_PER_ITER, num_evals=0), TOY_ENV_ID,
                 run_dir=run_dir, progress=False)
    (older, _), (newest, newest_path) = ckpt.checkpoints(run_dir)
    newest_path.write_bytes(newest_path.read_bytes()[:100])  # a copy cut short
    template = Trainer(PPOLag, tiny(PPOLag.Config), runner.make_env(TOY_ENV_ID)).abstract_state()
    with pytest.warns(UserWarning) as caught:
        restored = ckpt.load_checkpoint(run_dir, template)
    message = str(caught[0].message)
    assert restored["env_steps"] == older and newest_path.name in message and f"step_{older}" in message
    runner.evaluate(run_dir, episodes=2)  # eval uses the readable one too
