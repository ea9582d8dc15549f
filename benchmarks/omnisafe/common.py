"""What every OmniSafe recorder shares: where the recorded data goes and how it is written.

The recorders run OmniSafe 0.5's own classes (in a Python 3.10 environment with ``omnisafe==0.5.0``
and torch from the package index, never a crax dependency) on small fixed inputs and write what
OmniSafe computes from them, for crax's ``test_*omnisafe*`` tests (``tests/learners/omnisafe_data.py``
reads it back). Make the environment and run a recorder from the repository root::

    ~/.pyenv/versions/3.10.13/bin/python -m venv /work/omnisafe-venv
    /work/omnisafe-venv/bin/pip install omnisafe==0.5.0 "numpy<2"
    /work/omnisafe-venv/bin/python benchmarks/omnisafe/<recorder>.py
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "learners" / "data" / "omnisafe"
"""Where the recorded files go, one JSON file per recorder topic."""


def plain(value: Any) -> Any:
    """``value`` with tensors and arrays as nested lists of floats (JSON's numbers), recursively."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def save(name: str, data: dict[str, Any], *, source: str) -> pathlib.Path:
    """Writes ``data`` to ``DATA/<name>.json`` with the versions it was recorded with and ``source``
    (the recorder's path), and returns the path."""
    import omnisafe
    import torch

    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{name}.json"
    record = {"omnisafe": omnisafe.__version__, "torch": torch.__version__, "source": source, **plain(data)}
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path
