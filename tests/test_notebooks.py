"""Every notebook under notebooks/ executes top to bottom, and shows what it is meant to show.

Each notebook asserts its own results in its cells (an error output fails the test); the checks
here add what the notebook's outputs must contain (a figure, the files a run writes). The kernel
shares the test session's persistent JAX compilation cache (tests/conftest.py), and renders
offscreen with EGL.
"""

import json
import pathlib

import jax
import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _outputs(cell) -> list:
    return cell.get("outputs", []) if cell.cell_type == "code" else []


def _text(cell) -> str:
    out = []
    for o in _outputs(cell):
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            out.append(o.data.get("text/plain", ""))
    return "".join(out)


def _images(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in _outputs(c))


def _code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def check_quickstart(nb, tmp_path):
    printed = "".join(_text(c) for c in _code_cells(nb))
    assert "cost terms: ['cost/" in printed  # the rollout's cost channels are listed
    assert "valid parameters: goal_radius" in _text(_code_cells(nb)[-1])  # the last cell shows a ValueError's message
    assert _images(nb) == 1  # the rendered frame


def check_train_and_compare(nb, tmp_path):
    found = sorted(tmp_path.glob("runs/*/*/results.json"))
    results = [json.loads(p.read_text()) for p in found]
    assert sorted(r["learner"] for r in results) == ["ppo", "ppo-lag"]
    for r in results:
        assert r["env_steps"] > 0 and len(r["final"]) == 1 and r["evals"]  # one seed, evaluated
    assert _images(nb) == 1  # the return/cost figure
    printed = _text(_code_cells(nb)[-1])
    assert all(f"{name:8s} seed 0" in printed for name in ("ppo", "ppo-lag"))  # both final evaluations


def check_write_a_plugin(nb, tmp_path):
    assert "match the hand computation at all" in _text(_code_cells(nb)[-1])


CHECKS = {"quickstart.ipynb": check_quickstart, "train_and_compare.ipynb": check_train_and_compare,
          "write_a_plugin.ipynb": check_write_a_plugin}

BUDGETS = {"train_and_compare.ipynb": {"TOTAL_STEPS = 20_000": "TOTAL_STEPS = 2_048"}}
"""Budget lines a notebook runs with here, replaced in its source before it executes: the test checks
that it runs and writes what it shows, not what its learners reach (16 iterations per learner rather
than 156; the kernel's compiles are most of the rest: 69 s cold on an idle 2-core CPU)."""


def with_budget(nb, name: str):
    for old, new in BUDGETS.get(name, {}).items():
        cells = [c for c in _code_cells(nb) if old in c.source]
        assert len(cells) == 1, f"{name}: the budget line {old!r} is not in exactly one code cell"
        cells[0].source = cells[0].source.replace(old, new)
    return nb


@pytest.mark.slow  # a Jupyter kernel per notebook, running its training and rendering for real
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path, monkeypatch):
    assert path.name in CHECKS, f"add a check for {path.name} to CHECKS in {__file__}"
    monkeypatch.setenv("MUJOCO_GL", "egl")  # the kernel inherits the environment
    if jax.config.jax_compilation_cache_dir:
        monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(jax.config.jax_compilation_cache_dir))
        monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                           str(jax.config.jax_persistent_cache_min_compile_time_secs))
        monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
                           str(jax.config.jax_persistent_cache_min_entry_size_bytes))
    nb = with_budget(nbformat.read(path, as_version=4), path.name)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [f"{o.ename}: {o.evalue}" for c in nb.cells for o in _outputs(c) if o.output_type == "error"]
    assert not errors
    CHECKS[path.name](nb, tmp_path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{path.name}: clear the outputs of cells {dirty} (jupyter nbconvert --clear-output --inplace)"
