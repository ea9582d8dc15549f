"""Studies: curriculum and transfer (docs/SPEC.md §6), grids of runs (sweeps, locally or on Ray), their
summary table and their curves.

    from crax.studies import sweep, summary_table, plot_runs
    sweep("sweeps/d", ["ppo", "ppo-lag"], ["PointGoal1"], [15, 25, 35], num_seeds=3,
          overrides={"total_steps": 2_000_000})
    summary = summary_table(["sweeps/d"], out="sweeps/d/table")   # .cells, .learners, .iqm_return ...
    plot_runs(["sweeps/d"], "sweeps/d/curves.png")

Studies sit above runs (layer 7, docs/architecture.md): they import crax.runs and crax.learners;
nothing below imports them, and their commands are in crax.cli.studies.
"""

from crax.studies.collect import RunResult, find_runs, read_result
from crax.studies.curriculum import curriculum
from crax.studies.grid import Cell, Grid
from crax.studies.plot import plot_runs
from crax.studies.sweep import SweepResult, sweep
from crax.studies.table import Summary, summary_table, to_markdown
from crax.studies.transfer import transfer

__all__ = ["Cell", "Grid", "RunResult", "Summary", "SweepResult", "curriculum", "find_runs", "plot_runs",
           "read_result", "summary_table", "sweep", "to_markdown", "transfer"]
