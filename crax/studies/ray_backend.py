"""Sweep cells as Ray tasks: one task per cell with its own CPU/GPU resources, writing the same run
folders as the local backend (so the sweep folder must be on a filesystem every node sees).

Ray is optional (``pip install -e ".[ray]"``). Each task runs in a fresh worker process
(``max_calls=1``): JAX fixes its devices and, on a GPU, preallocates its memory when it starts,
so a worker must not carry one cell's JAX runtime into the next.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crax.devices import settings

if TYPE_CHECKING:
    from crax.studies.cells import Manifest
    from crax.studies.grid import Cell

INSTALL_HINT = 'pip install -e ".[ray]"  (or: pip install "ray[default]>=2.60")'


def require_ray():
    """The ``ray`` module, or a ValueError saying how to install it."""
    try:
        import ray
    except ImportError:
        message = f"--backend ray needs Ray, which is not installed here; install it with: {INSTALL_HINT}"
        raise ValueError(message) from None
    return ray


def _worker_env(cpus_per_cell: float, gpus_per_cell: float) -> dict[str, str]:
    env = {settings.HOST_DEVICES.name: str(max(1, math.floor(cpus_per_cell)))}  # host devices = the CPUs Ray granted
    if 0 < gpus_per_cell < 1:  # cells sharing a GPU: no preallocation of 75% of its memory each
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    return env


def run_on_ray(jobs: list[tuple[Cell, dict[str, Any]]], manifest: Manifest, *, address: str | None,
               cpus_per_cell: float, gpus_per_cell: float, echo: Callable[[str], None]) -> None:
    """Runs every job as a Ray task (on the running Ray instance, the cluster at ``address``, or a
    new local instance), updating the manifest as tasks finish. Ctrl-C cancels the tasks left."""
    ray = require_ray()
    if not jobs:
        return
    from ray.exceptions import RayError

    from crax.studies.cells import run_cell

    started = not ray.is_initialized()
    if started:
        local: dict[str, Any] = {"runtime_env": {"env_vars": {"PYTHONPATH": _pythonpath()}}} if address is None else {}
        ray.init(address=address, **local)
    # Any: Ray types remote() by positional arity, and the jobs pass run_cell's arguments by keyword
    task: Any = ray.remote(num_cpus=cpus_per_cell, num_gpus=gpus_per_cell, max_calls=1,
                           runtime_env={"env_vars": _worker_env(cpus_per_cell, gpus_per_cell)})(run_cell)
    refs = {}
    try:
        for cell, job in jobs:
            refs[task.remote(**job, progress=False)] = cell
            manifest.set(cell.name, status="running")
        echo(f"{len(refs)} cell(s) submitted to Ray ({cpus_per_cell:g} CPU, {gpus_per_cell:g} GPU each)")
        pending = list(refs)
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            cell = refs[finished[0]]
            try:
                outcome = ray.get(finished[0])
            except RayError as e:
                outcome = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
            manifest.set(cell.name, status=outcome["status"], error=outcome["error"])
            echo(f"{cell.name}: {outcome['status']}" + (f" ({outcome['error']})" if outcome["error"] else ""))
    except KeyboardInterrupt:
        for ref, cell in refs.items():
            if manifest.cells[cell.name]["status"] == "running":
                ray.cancel(ref, force=True)
                manifest.set(cell.name, status="interrupted")
        raise
    finally:
        if started:
            ray.shutdown()


def _pythonpath() -> str:
    """This process's import path, so local workers import what the driver imports (e.g. an env class
    from the working tree); on a cluster, every node needs crax (and such modules) installed."""
    return os.pathsep.join(p for p in sys.path if p)
