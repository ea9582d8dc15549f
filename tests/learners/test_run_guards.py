"""What a run refuses before it starts, and how it stops when the disk does: a config rejected at
validation leaves no run folder, a run folder has one writer at a time, a full disk while
checkpointing says what happened and how to resume, runs that cannot fit in memory and seeds
beyond 64 bits are refused with the field named (issue 25, items 16, 21, 22)."""

from __future__ import annotations

import errno
import os

import pytest

from crax import runs
from crax.cli import train as train_cli
from crax.learners import PPOLag, Trainer
from crax.runs import checkpoint as ckpt
from crax.runs.lock import RunLock
from tests.learners.conftest import TOY_ENV_ID, tiny

STEPS_PER_ITER = 64


def test_a_config_refused_at_validation_leaves_no_run_folder(tmp_path, capsys):
    config = tiny(PPOLag.Config, budgets=("cost/nosuch=5",))
    with pytest.raises(ValueError, match="nosuch"):
        runs.train(PPOLag, config, TOY_ENV_ID, runs_root=tmp_path / "runs", progress=False)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    with pytest.raises(ValueError, match="nosuch"):
        runs.train(PPOLag, config, TOY_ENV_ID, run_dir=tmp_path / "named", progress=False)
    assert not (tmp_path / "named").exists()


def test_seed_beyond_64_bits_is_refused_naming_the_field(tmp_path):
    with pytest.raises(ValueError, match="'seed' must be a 64-bit integer"):
        runs.train(PPOLag, tiny(PPOLag.Config, seed=2**64), TOY_ENV_ID, run_dir=tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="seed must be a 64-bit integer"):
        runs.evaluate(tmp_path / "r", episodes=1, seed=-(2**63) - 1)


def test_a_run_that_cannot_fit_in_memory_is_refused_before_its_folder(tmp_path, monkeypatch):
    small = Trainer(PPOLag, tiny(PPOLag.Config), runs.make_env(TOY_ENV_ID))
    big = Trainer(PPOLag, tiny(PPOLag.Config, num_envs=64, batch_size=64, num_minibatches=2),
                  runs.make_env(TOY_ENV_ID))
    assert runs.memory_estimate(big) > runs.memory_estimate(small) > 0
    runs.check_memory(small)  # this machine holds a tiny run
    monkeypatch.setattr(runs.guards, "_memory_available", lambda device: runs.memory_estimate(small) + 1)
    runs.check_memory(small)
    with pytest.raises(ValueError, match="lower --num-envs") as exc:
        runs.train(PPOLag, big.config, TOY_ENV_ID, run_dir=tmp_path / "r", progress=False)
    assert "64 envs" in str(exc.value) and not (tmp_path / "r").exists()


def test_a_second_writer_of_a_run_folder_is_refused_naming_the_holder(tmp_path, capsys):
    run_dir = tmp_path / "run"
    runs.train(PPOLag, tiny(PPOLag.Config, total_steps=2 * STEPS_PER_ITER, num_evals=0), TOY_ENV_ID,
                 run_dir=run_dir, progress=False)
    config_before = (run_dir / ckpt.CONFIG_FILE).read_bytes()
    with RunLock(run_dir):  # as another `crax train --resume` of this run would hold it
        with pytest.raises(SystemExit) as exc:
            train_cli.train_main(["--resume", str(run_dir), "--total-steps", "256", "--no-progress"])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "is in use by process" in err and str(os.getpid()) in err
        assert (run_dir / ckpt.CONFIG_FILE).read_bytes() == config_before  # the refused one wrote nothing
        assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER]
    with pytest.raises(runs.RunComplete):  # released: the run folder is usable again
        runs.train(None, run_dir=run_dir, resume=True, progress=False)


def test_a_full_disk_while_checkpointing_says_how_to_resume(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    fsync = os.fsync

    def full_disk_on_the_second_checkpoint(fd):
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith(f"step_{4 * STEPS_PER_ITER}.msgpack.tmp"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk_on_the_second_checkpoint)
    config = tiny(PPOLag.Config, total_steps=6 * STEPS_PER_ITER, num_evals=0, checkpoint_every=2)
    with pytest.raises(SystemExit) as exc:
        train_cli.run_or_exit("crax train", runs.train, PPOLag, config, TOY_ENV_ID, run_dir=run_dir, progress=False)
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and f"step {4 * STEPS_PER_ITER:,}" in err
    assert f"step_{2 * STEPS_PER_ITER}.msgpack" in err and f"crax train --resume {run_dir}" in err
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER]
    assert not [p.name for p in (run_dir / ckpt.CHECKPOINT_DIR).iterdir() if p.name.endswith(".tmp")]

    monkeypatch.undo()  # space freed; the failed run released its lock
    result = runs.train(None, run_dir=run_dir, resume=True, progress=False)
    assert result.env_steps == 6 * STEPS_PER_ITER
