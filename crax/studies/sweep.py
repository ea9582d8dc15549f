"""``crax sweep``: train every cell of a :class:`~crax.studies.grid.Grid` into one sweep folder.

The sweep folder holds ``manifest.json`` (the grid, the shared overrides, each cell's folder and
status) and one ordinary run folder per cell, ``<env>-<learner>-d<bound>/``, written by
:func:`crax.runs.training.train`. Running the same sweep again skips finished cells, resumes cells that
have a checkpoint and restarts cells that stopped before their first one; other arguments into
the same folder are refused. Cells run one after another in this process (``backend="local"``)
or as Ray tasks (``backend="ray"``, see :mod:`crax.studies.ray_backend`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from crax.runs import checkpoint as ckpt
from crax.studies.cells import Manifest, cell_state, run_cell
from crax.studies.grid import Cell, Grid


@dataclasses.dataclass
class SweepResult:
    """A sweep's folder, grid and per-cell records (``name``, ``learner``, ``env``, ``safety_bound``,
    ``dir``, ``status``, ``error``); ``failed`` lists the cells that did not finish."""

    dir: Path
    grid: Grid
    cells: list[dict[str, Any]]

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [c for c in self.cells if c["status"] == "failed"]


def _action(run_dir: Path) -> str:
    """What running the sweep does to a cell, in words."""
    state = cell_state(run_dir)
    if state == "partial":
        return f"resume from step {ckpt.checkpoints(run_dir)[-1][0]:,}"
    return {"new": "train", "done": "skip (finished)", "restart": "restart (no checkpoint)"}[state]


def _actions(sweep_dir: Path, grid: Grid) -> dict[str, str]:
    return {cell.name: _action(sweep_dir / cell.name) for cell in grid.cells()}


def sweep(out: str | Path, learners: Sequence[str], envs: Sequence[str], safety_bounds: Sequence[float] = (25.0,),
          num_seeds: int = 3, overrides: Mapping[str, Any] | None = None, *,
          env_kwargs: Mapping[str, Any] | None = None,
          backend: Literal["local", "ray"] = "local", address: str | None = None, cpus_per_cell: float = 1.0,
          gpus_per_cell: float = 0.0, dry_run: bool = False, progress: bool | None = None,
          echo: Callable[[str], None] = print) -> SweepResult:
    """Trains every cell of learners × envs × safety_bounds into the sweep folder ``out``.

    Args:
      out: the sweep folder (created; an existing one must hold the same grid).
      learners, envs, safety_bounds: the grid (learner names, env ids, bounds d).
      num_seeds: seeds per cell, trained together (``config.num_seeds``).
      overrides: learner config fields applied to every cell (e.g. ``{"total_steps": 2_000_000}``).
      env_kwargs: constraints and sensors added to every env, as ``crax.make`` takes them
        (``{"constraints": {"action_energy": {"weight": 0.05}}}``).
      backend: ``"local"`` (cells in turn, in this process) or ``"ray"`` (one Ray task per cell).
      address: Ray cluster address (default: a local Ray instance, or the one already initialised).
      cpus_per_cell, gpus_per_cell: Ray resources of each cell's task.
      dry_run: print the grid and what each cell would do; train nothing, write nothing.
      progress: progress bars of local cells (default: when stderr is a terminal).
      echo: where status lines go.

    Returns the :class:`SweepResult` (for a dry run, with the cells' current states).
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if cpus_per_cell < 0 or gpus_per_cell < 0:
        raise ValueError(f"cpus_per_cell and gpus_per_cell must be >= 0, got {cpus_per_cell} and {gpus_per_cell}")
    grid = Grid(tuple(learners), tuple(envs), tuple(safety_bounds), num_seeds, dict(overrides or {}),
                dict(env_kwargs or {}))
    sweep_dir = Path(out).resolve()
    if sweep_dir.exists() and not sweep_dir.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, not a folder")
    Manifest.check(sweep_dir, grid)
    if backend == "ray":
        from crax.studies.ray_backend import require_ray

        require_ray()
    actions = _actions(sweep_dir, grid)
    manifest = Manifest(sweep_dir, grid)
    for cell in grid.cells():
        if cell_state(sweep_dir / cell.name) == "done":
            manifest.cells[cell.name]["status"] = "done"
    echo(f"sweep {sweep_dir}" + (" (dry run: nothing is trained)" if dry_run else ""))
    echo(grid.describe(actions))
    if dry_run:
        return SweepResult(sweep_dir, grid, list(manifest.cells.values()))
    sweep_dir.mkdir(parents=True, exist_ok=True)
    manifest.write()
    todo = [cell for cell in grid.cells() if manifest.cells[cell.name]["status"] != "done"]
    jobs = [(cell, {"run_dir": str(sweep_dir / cell.name), "learner": cell.learner, "env": cell.env,
                    "config": grid.config(cell), "env_kwargs": dict(grid.env_kwargs) or None}) for cell in todo]
    if backend == "local":
        _run_local(jobs, manifest, progress, echo)
    else:
        from crax.studies.ray_backend import run_on_ray

        run_on_ray(jobs, manifest, address=address, cpus_per_cell=cpus_per_cell, gpus_per_cell=gpus_per_cell,
                   echo=echo)
    result = SweepResult(sweep_dir, grid, list(manifest.cells.values()))
    done = sum(c["status"] == "done" for c in result.cells)
    echo(f"{done} of {len(result.cells)} cells finished" + (f", {len(result.failed)} failed" if result.failed else ""))
    for c in result.failed:
        echo(f"  {c['name']}: {c['error']}")
    return result


def _run_local(jobs: list[tuple[Cell, dict[str, Any]]], manifest: Manifest, progress: bool | None,
               echo: Callable[[str], None]) -> None:
    for i, (cell, job) in enumerate(jobs):
        echo(f"[{i + 1}/{len(jobs)}] {cell.name}: {_action(Path(job['run_dir']))}")
        manifest.set(cell.name, status="running")
        try:
            outcome = run_cell(**job, progress=progress)
        except KeyboardInterrupt:
            manifest.set(cell.name, status="interrupted")
            raise
        manifest.set(cell.name, status=outcome["status"], error=outcome["error"])
        if outcome["error"]:
            echo(f"{cell.name} failed: {outcome['error']}")
