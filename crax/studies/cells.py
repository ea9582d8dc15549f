"""One sweep cell and the sweep's manifest: what a cell's folder needs (:func:`cell_state`), training it
(:func:`run_cell`, run by the local loop and by Ray workers alike) and ``manifest.json`` (:class:`Manifest`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from crax import runs
from crax.runs import checkpoint as ckpt
from crax.runs import files
from crax.studies.collect import MANIFEST_FILE
from crax.studies.grid import Grid

MANIFEST_VERSION = 1


def cell_state(run_dir: str | Path) -> Literal["new", "done", "partial", "restart"]:
    """What a cell's folder needs: ``new`` (no run yet), ``done`` (complete ``results.json``),
    ``partial`` (a checkpoint to resume from) or ``restart`` (``config.json`` but no checkpoint)."""
    run_dir = Path(run_dir)
    if not (run_dir / ckpt.CONFIG_FILE).exists():
        return "new"
    if _complete(run_dir):
        return "done"
    return "partial" if ckpt.checkpoints(run_dir) else "restart"


def _complete(run_dir: Path) -> bool:
    """``results.json`` exists and covers every seed and the whole step budget of ``config.json``."""
    try:
        results = json.loads((run_dir / runs.RESULTS_FILE).read_text(encoding="utf-8"))
        record = ckpt.read_config(run_dir)
        config = ckpt.config_from_dict(runs.get_learner(record["learner"]).Config, record["config"])
        return (len(results["final"]) == config.num_seeds
                and results["env_steps"] >= config.num_iterations * config.steps_per_iteration)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def run_cell(run_dir: str, learner: str, env: str, config: Any, progress: bool | None = False,
             env_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Brings one cell's run folder to completion: skip, resume, restart or train (``env_kwargs``
    go to ``crax.make``). Returns ``{"status": "done" | "failed", "action", "error"}``; a diverged
    or refused run is ``failed``."""
    state = cell_state(run_dir)
    action = {"new": "train", "done": "skip", "partial": "resume", "restart": "restart"}[state]
    if state == "done":
        return {"status": "done", "action": action, "error": None}
    try:
        result = runs.complete_run(learner, config, env, run_dir, progress=progress, env_kwargs=env_kwargs)
    except (ValueError, runs.TrainingDiverged) as e:
        return {"status": "failed", "action": action, "error": f"{type(e).__name__}: {e}"}
    if result is None:  # stopped after its last checkpoint: the runner has now written its results
        return {"status": "done" if _complete(Path(run_dir)) else "failed", "action": "finish", "error": None}
    return {"status": "done", "action": action, "error": None}


class Manifest:
    """The sweep folder's ``manifest.json``, rewritten atomically on every change (by the driver only)."""

    def __init__(self, sweep_dir: Path, grid: Grid):
        self.path = sweep_dir / MANIFEST_FILE
        self.grid = grid
        self.cells = {c.name: {"name": c.name, "learner": c.learner, "env": c.env, "safety_bound": c.safety_bound,
                               "dir": c.name, "status": "pending", "error": None} for c in grid.cells()}

    @staticmethod
    def check(sweep_dir: Path, grid: Grid) -> None:
        """ValueError naming the differences when ``sweep_dir`` holds a sweep of another grid."""
        path = sweep_dir / MANIFEST_FILE
        if not path.exists():
            return
        try:
            stored = files.read_json(path, "a crax sweep manifest")["grid"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"{path} is not a crax sweep manifest: it has no grid ({type(e).__name__}: {e}); "
                             "delete it to start the sweep over, or choose another --out") from None
        diff = grid.differences(stored)
        if diff:
            raise ValueError(f"{str(sweep_dir)!r} holds a sweep with other arguments ({'; '.join(diff)}); run it "
                             "again with its own arguments to resume it, or choose another --out")

    def set(self, name: str, **changes: Any) -> None:
        self.cells[name].update(changes)
        self.write()

    def write(self) -> None:
        record = {"version": MANIFEST_VERSION, "grid": self.grid.to_json(), "cells": list(self.cells.values())}
        files.write_json(self.path, record)
