"""OmniSafe's recorded numbers (``tests/learners/data/omnisafe/<name>.json``, written by the recorders
in ``benchmarks/omnisafe/``), for the ``test_*omnisafe*`` tests."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "omnisafe"


def arrays(value: Any) -> Any:
    """Nested lists of numbers as float32 arrays (dicts and lists of records kept as they are)."""
    if isinstance(value, dict):
        return {k: arrays(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [arrays(v) for v in value]
    if isinstance(value, list | int | float) and not isinstance(value, bool):
        return np.asarray(value, np.float32)
    return value


def load(name: str) -> dict[str, Any]:
    """The record ``name`` with its numbers as float32 arrays."""
    return arrays(json.loads((DATA / f"{name}.json").read_text()))
