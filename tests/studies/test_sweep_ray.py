"""crax sweep --backend ray: two cells as Ray tasks on a local Ray instance, writing the same run
folders and manifest as the local backend; a rerun skips them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crax import runs
from crax.studies import sweep
from tests.learners.conftest import TINY, TOY_ENV_ID

ray = pytest.importorskip("ray", reason='Ray is an optional extra: pip install -e ".[ray]"')
pytestmark = pytest.mark.slow  # starts a local Ray instance and trains in its worker processes
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # ray.init starts its processes with fork+exec
def test_two_cells_on_local_ray(tmp_path):
    # workers import the toy env from the working tree, as the driver does under pytest
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        out = tmp_path / "sweep"
        lines = []
        args = (out, ["ppo", "ppo-lag"], [TOY_ENV_ID], [5.0])
        kwargs = dict(num_seeds=2, overrides={**TINY, "total_steps": 64}, backend="ray", echo=lines.append)
        result = sweep(*args, **kwargs)
        assert not result.failed, result.failed
        assert "2 cell(s) submitted to Ray (1 CPU, 0 GPU each)" in lines
        manifest = json.loads((out / "manifest.json").read_text())
        assert {c["name"]: c["status"] for c in manifest["cells"]} == {"ToyEnv-ppo": "done",
                                                                        "ToyEnv-ppo-lag-d5": "done"}
        for learner, cell in (("ppo", "ToyEnv-ppo"), ("ppo-lag", "ToyEnv-ppo-lag-d5")):
            results = json.loads((out / cell / runs.RESULTS_FILE).read_text())
            assert results["learner"] == learner and results["env_steps"] == 64 and len(results["final"]) == 2
            assert results["safety_bound"] == 5.0
        lines.clear()
        sweep(*args, **kwargs)  # finished cells: nothing goes to Ray
        assert "2 of 2 cells finished" in lines and not any("submitted" in line for line in lines)
    finally:
        ray.shutdown()
