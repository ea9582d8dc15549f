"""The static checks: pyright, in basic mode, reports no error on ``crax/``; ruff reports nothing.

Its settings are ``[tool.pyright]`` in pyproject.toml (with ``typings/`` for mujoco's compiled
bindings, which ship no stubs). Run it by hand from the repository root, with the dev extra
installed (``pip install -e ".[dev]"``)::

    .venv/bin/pyright --pythonpath .venv/bin/python            # all of crax/ (a minute or two)
    .venv/bin/pyright --pythonpath .venv/bin/python crax/cli   # one folder while fixing it

``--pythonpath`` points pyright at the environment crax is installed in (where it finds jax,
mujoco, flax...). A ``# pyright: ignore[rule]`` in crax/ says on its line why the library's
annotation is narrower than what the call passes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _format(diagnostic: dict) -> str:
    start = diagnostic.get("range", {}).get("start", {})
    where = f"{diagnostic.get('file', '?')}:{start.get('line', -1) + 1}:{start.get('character', -1) + 1}"
    rule = f" ({diagnostic['rule']})" if diagnostic.get("rule") else ""
    return f"{where} - {diagnostic.get('severity')}: {diagnostic.get('message')}{rule}"


@pytest.mark.slow
def test_pyright_reports_no_errors():
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    if pyright is None:
        pytest.skip(f'pyright is not installed next to {sys.executable} (it is in the dev extra: pip install -e ".[dev]")')
    done = subprocess.run([pyright, "--outputjson", "--pythonpath", sys.executable], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright exited with {done.returncode} without a JSON report:\n{done.stdout}\n{done.stderr}")
    errors = [d for d in report.get("generalDiagnostics", []) if d.get("severity") == "error"]
    assert not errors and done.returncode == 0, (
        f"pyright reports {report.get('summary', {}).get('errorCount', len(errors))} error(s) "
        f"(exit code {done.returncode}):\n" + "\n".join(map(_format, errors)) + f"\n{done.stderr}")


def test_ruff_reports_nothing():
    """``ruff check`` (settings: ``[tool.ruff]`` in pyproject.toml) on the code, tests, benchmarks and tools: a second."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip(f'ruff is not installed next to {sys.executable} (it is in the dev extra: pip install -e ".[dev]")')
    done = subprocess.run([ruff, "check", "--no-cache", "crax", "tests", "benchmarks", "tools", "examples", "docs"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
