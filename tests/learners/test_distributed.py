"""Training over two processes (jax.distributed on localhost, one CPU device each) matches one process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from crax.cli import train as train_cli
from crax.runs.metrics import read_metrics
from tests.learners.conftest import TOY_ENV_ID
from tests.learners.test_train import STEPS_PER_ITER, tiny_flags

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "CRAX_HOST_DEVICES": "1",
       "XLA_FLAGS": " ".join(f for f in os.environ.get("XLA_FLAGS", "").split() if "device_count" not in f)}
"""One CPU device per process; the tests' XLA build options (tests/conftest.py) are kept, so the two
processes compile as fast as the test process does."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _two_processes(args: list[str]) -> list[str]:
    """Runs ``crax train ARGS`` as processes 0 and 1 of one run; returns their stdouts."""
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, "-m", "crax.cli", "train", *args, "--coordinator-address",
                               f"localhost:{port}", "--num-processes", "2", "--process-id", str(i)],
                              cwd=ROOT, env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        outs.append(out)
    return outs


def _losses(run_dir: Path) -> dict[int, dict[str, float]]:
    return {r["step"]: r for r in read_metrics(run_dir) if "loss/policy" in r}


@pytest.mark.slow  # four training processes (two runs of two) beside an in-process reference run
def test_two_processes_train_like_one_and_resume(tmp_path):
    flags = ["ppo-lag", "--env", TOY_ENV_ID, "--no-progress", "--lambda-lr", "0.5", *tiny_flags(num_evals=2)]
    one = tmp_path / "one"
    train_cli.train_main([*flags, "--run-dir", str(one), "--total-steps", str(4 * STEPS_PER_ITER)])

    two = tmp_path / "two"
    outs = _two_processes([*flags, "--run-dir", str(two), "--total-steps", str(2 * STEPS_PER_ITER)])
    assert "run folder:" in outs[0] and "run folder:" not in outs[1]  # process 0 reports, process 1 stays quiet
    outs = _two_processes(["--resume", str(two), "--total-steps", str(4 * STEPS_PER_ITER), "--no-progress"])
    assert "seed 0: return" in outs[0]

    ref, got = _losses(one), _losses(two)
    assert sorted(got) == sorted(ref) == [STEPS_PER_ITER * i for i in (1, 2, 3, 4)]  # one record per step
    for step in ref:
        for key in ("loss/policy", "loss/value_reward", "loss/value_cost", "multiplier/lagrange", "policy/kl"):
            np.testing.assert_allclose(got[step][key], ref[step][key], rtol=2e-3, atol=2e-4, err_msg=f"{step} {key}")
    assert (two / "results.json").exists() and len(list((two / "checkpoints").iterdir())) == 2


def test_cluster_flags_need_a_coordinator(capsys):
    with pytest.raises(SystemExit) as e:
        train_cli.train_main(["ppo", "--env", TOY_ENV_ID, "--num-processes", "2"])
    assert e.value.code == 2
    assert "--num-processes and --process-id need --coordinator-address HOST:PORT" in capsys.readouterr().err
