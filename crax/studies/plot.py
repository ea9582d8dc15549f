"""Training curves of runs and sweeps: episodic return and cost against env steps.

One row of two panels (return, cost) per (env, safety bound); one colour per learner; the line is
the mean over seeds (every seed of every run of that learner, env and bound), the band its 95%
Student-t interval, and the bound d is drawn dashed on the cost panel. Drawn with matplotlib's
Agg canvas directly, so no pyplot backend is switched (a notebook keeps its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from crax.studies import stats
from crax.studies.collect import RunCurves, expand_bound_free, find_runs, read_curves


def curve_band(seeds: Iterable[tuple[tuple[int, ...], tuple[float, ...]]]) -> tuple[np.ndarray, ...]:
    """``(steps, mean, low, high)`` over seeds at every logged step (the seeds that logged it; the
    band collapses to the mean where only one did)."""
    by_step: dict[int, list[float]] = {}
    for steps, values in seeds:
        for t, v in zip(steps, values, strict=True):
            by_step.setdefault(t, []).append(v)
    steps = np.array(sorted(by_step), dtype=np.int64)
    mean, low, high = (np.empty(len(steps)) for _ in range(3))
    for i, t in enumerate(steps):
        m, ci = stats.mean_interval(by_step[int(t)])
        mean[i], (low[i], high[i]) = m, ci or (m, m)
    return steps, mean, low, high


def _groups(curves: list[RunCurves]) -> dict[tuple[str, float], dict[str, list[RunCurves]]]:
    groups: dict[tuple[str, float], dict[str, list[RunCurves]]] = {}
    for c in sorted(curves, key=lambda c: (c.env, c.safety_bound, c.learner)):
        groups.setdefault((c.env, c.safety_bound), {}).setdefault(c.learner, []).append(c)
    return groups


def plot_runs(paths: Iterable[str | Path], out: str | Path | None = None, *, dpi: int = 120) -> Figure:
    """Plots the runs in ``paths`` (run folders or sweep folders); writes ``out`` (PNG, PDF, SVG…) if given."""
    curves = [c for c in map(read_curves, find_runs(paths)) if c.seeds]
    if not curves:
        raise ValueError("none of the runs has logged a finished episode yet (no episode/return in metrics.jsonl)")
    groups = _groups(expand_bound_free(curves))
    learners = sorted({c.learner for c in curves})
    palette = [f"C{i % 10}" for i in range(len(learners))]
    colour = dict(zip(learners, palette, strict=True))
    fig = Figure(figsize=(11, 3.4 * len(groups)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(groups), 2, squeeze=False)
    for row, ((env, bound), by_learner) in enumerate(groups.items()):
        ax_r, ax_c = axes[row]
        for learner, runs in by_learner.items():
            seeds = [s for run in runs for s in run.seeds]
            for ax, k in ((ax_r, 1), (ax_c, 2)):
                steps, mean, low, high = curve_band((s[0], s[k]) for s in seeds)
                ax.plot(steps, mean, color=colour[learner], label=f"{learner} ({len(seeds)} seeds)")
                ax.fill_between(steps, low, high, color=colour[learner], alpha=0.2, linewidth=0)
        ax_c.axhline(bound, color="black", linestyle="--", linewidth=1, label=f"bound d = {bound:g}")
        label = env.rpartition(":")[2]
        ax_r.set_title(f"{label}: episodic return (d = {bound:g})")
        ax_c.set_title(f"{label}: episodic cost")
        for ax in (ax_r, ax_c):
            ax.set_xlabel("env steps per seed")
            ax.grid(alpha=0.3)
        ax_r.set_ylabel("return")
        ax_c.set_ylabel("cost")
        ax_c.legend(fontsize="small")
    fig.suptitle("training episodes: mean over seeds, 95% Student-t band")
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=dpi)
    return fig
