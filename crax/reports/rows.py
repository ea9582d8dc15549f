"""Reading ``benchmarks/results/``: the rows of a results file and the small formats every table shares."""

from __future__ import annotations

import json
from pathlib import Path


def read_rows(results: Path, name: str, *, optional: bool = False) -> list[dict]:
    """The rows of ``results/<name>`` (JSON lines), oldest first; ``[]`` for a missing ``optional``
    file (a table that says no sitting has filled it yet)."""
    path = results / name
    if optional and not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def bench_rows(results: Path, source: str, physics: str = "jax", *, optional: bool = False) -> list[dict]:
    """``bench_envs.py`` rows of one MJX implementation (rows from before ``--physics`` ran on ``jax``)."""
    return [r for r in read_rows(results, source, optional=optional) if r.get("physics", "jax") == physics]


def minute(sitting: str) -> str:
    """A sitting's ISO time stamp to the minute, as the tables print it (``2026-11-29 14:36``)."""
    return sitting[:16].replace("T", " ")


def cpu(row: dict) -> str:
    """`, <CPU model>` where the row recorded it (rows from before 2026-11-28 did not)."""
    return f", {row['cpu']}" if "cpu" in row else ""


def first_table(path: Path) -> str:
    """A Markdown file up to the end of its first table (its caption and that table, without the rest)."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise ValueError(f"{path} has no Markdown table")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[:end])
