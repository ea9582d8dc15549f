"""The summary table of a study (the paper's Table 3 layout) with confidence intervals, the IQM
of normalized returns and the probability of improvement between learners.

Per cell (learner, env, safety bound): mean episodic return R and cost C of the final evaluation
over all seeds of all runs of that cell, with 95% Student-t intervals over seeds; *safe* if the
mean C < d; *win* if safe and the highest mean R among the safe learners of that (env, bound)
(ties all win). Beside C, what its mean hides, each a mean over seeds of a per-seed statistic with
its Student-t interval: P(C > d), the fraction of a seed's evaluation episodes over the bound; the
CVaR of their cost (the worst tenth's mean, :data:`crax.runs.results.CVAR_ALPHA`); and the cost
rate, the seed's cost per step over all of training (Ray et al.'s Safety Gym metric). Per learner: wins and safe % per level and in total. A run of a learner that
ignores the bound (PPO, PPO-Cost) counts at every bound of its env (:func:`expand_bound_free`).

Beyond the paper, with stratified-bootstrap 95% intervals over the runs of each task (a task is
an (env, bound) pair, a run a seed): the interquartile mean of the min–max normalized return
(per task, over the runs of every learner in the table), the IQM of C/d, and per pair of
learners P(X > Y), the probability that a run of X has a higher return than a run of Y on the same task.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crax.runs.results import CVAR_ALPHA
from crax.studies import stats
from crax.studies.collect import RunResult, expand_bound_free, find_runs, read_result

Interval = tuple[float, float] | None


@dataclasses.dataclass(frozen=True)
class CellSummary:
    """One (learner, env, bound) cell: means over seeds with 95% intervals (None for one seed)."""

    learner: str
    env: str
    level: int | None
    safety_bound: float
    seeds: int
    return_mean: float
    return_ci: Interval
    cost_mean: float
    cost_ci: Interval
    safe: bool
    win: bool
    runs: tuple[str, ...]
    over_bound_mean: float = math.nan
    over_bound_ci: Interval = None
    cvar_mean: float = math.nan
    cvar_ci: Interval = None
    cost_rate_mean: float = math.nan
    cost_rate_ci: Interval = None


@dataclasses.dataclass(frozen=True)
class LearnerSummary:
    """A learner's wins and safe cells per level (key None: envs without a level) and in total."""

    learner: str
    levels: dict[int | None, dict[str, int]]
    total: dict[str, int]


@dataclasses.dataclass
class Summary:
    """Everything ``crax table`` prints and writes."""

    policy: str
    cells: list[CellSummary]
    learners: list[LearnerSummary]
    iqm_return: dict[str, dict[str, Any]]
    iqm_cost: dict[str, dict[str, Any]]
    improvement: list[dict[str, Any]]
    skipped: list[str]

    @property
    def levels(self) -> list[int | None]:
        return sorted({c.level for c in self.cells}, key=lambda v: (v is None, v or 0))

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "confidence": stats.CONFIDENCE,
            "cells": [dataclasses.asdict(c) for c in self.cells],
            "learners": {s.learner: {"levels": {_level_name(k): v for k, v in s.levels.items()}, "total": s.total}
                         for s in self.learners},
            "iqm_normalized_return": self.iqm_return,
            "iqm_cost_over_bound": self.iqm_cost,
            "probability_of_improvement": self.improvement,
            "skipped": self.skipped,
        }


def _level_name(level: int | None) -> str:
    return "-" if level is None else str(level)


def _cells(results: Sequence[RunResult]) -> list[CellSummary]:
    groups: dict[tuple[str, str, float], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.learner, r.env, r.safety_bound), []).append(r)
    rows = []
    for (learner, env, bound), runs in groups.items():
        returns = [v for r in runs for v in r.returns]
        costs = [v for r in runs for v in r.costs]
        r_mean, r_ci = stats.mean_interval(returns)
        c_mean, c_ci = stats.mean_interval(costs)
        tails = {}
        for name, field in (("over_bound", "over_bound"), ("cvar", "cost_cvar"), ("cost_rate", "cost_rate")):
            tails[f"{name}_mean"], tails[f"{name}_ci"] = _finite_interval([v for r in runs for v in getattr(r, field)])
        rows.append(dict(learner=learner, env=env, level=runs[0].level, safety_bound=bound, seeds=len(returns),
                         return_mean=r_mean, return_ci=r_ci, cost_mean=c_mean, cost_ci=c_ci,
                         safe=bool(c_mean < bound), runs=tuple(str(r.run_dir) for r in runs), **tails))
    best: dict[tuple[str, float], float] = {}
    for row in rows:
        if row["safe"] and not math.isnan(row["return_mean"]):
            key = (row["env"], row["safety_bound"])
            best[key] = max(best.get(key, -math.inf), row["return_mean"])
    cells = [CellSummary(**row, win=row["safe"] and row["return_mean"] == best.get((row["env"], row["safety_bound"])))
             for row in rows]
    return sorted(cells, key=lambda c: (c.env, c.safety_bound, c.learner))


def _finite_interval(values: Sequence[float]) -> tuple[float, Interval]:
    """:func:`stats.mean_interval` of the finite values; NaN and no interval when there is none."""
    finite = [v for v in values if math.isfinite(v)]
    return stats.mean_interval(finite) if finite else (math.nan, None)


def _learner_rows(cells: Sequence[CellSummary]) -> list[LearnerSummary]:
    out = []
    for learner in sorted({c.learner for c in cells}):
        mine = [c for c in cells if c.learner == learner]

        def count(group: list[CellSummary]) -> dict[str, int]:
            return {"cells": len(group), "wins": sum(c.win for c in group), "safe": sum(c.safe for c in group)}

        levels = {lv: count([c for c in mine if c.level == lv]) for lv in sorted({c.level for c in mine},
                                                                                  key=lambda v: (v is None, v or 0))}
        out.append(LearnerSummary(learner=learner, levels=levels, total=count(mine)))
    return out


def _tasks(results: Sequence[RunResult]) -> dict[tuple[str, float], dict[str, list[RunResult]]]:
    tasks: dict[tuple[str, float], dict[str, list[RunResult]]] = {}
    for r in results:
        tasks.setdefault((r.env, r.safety_bound), {}).setdefault(r.learner, []).append(r)
    return tasks


def _normalized(results: Sequence[RunResult]) -> dict[str, list[tuple[list[float], list[float]]]]:
    """Per learner, per task: (min–max normalized returns, costs / bound) of its runs."""
    out: dict[str, list[tuple[list[float], list[float]]]] = {}
    for (_, bound), by_learner in sorted(_tasks(results).items()):
        every = np.array([v for runs in by_learner.values() for r in runs for v in r.returns])
        lo, hi = float(np.nanmin(every)), float(np.nanmax(every))
        for learner, runs in by_learner.items():
            returns = np.array([v for r in runs for v in r.returns])
            normalized = (returns - lo) / (hi - lo) if hi > lo else np.full_like(returns, 0.5)
            costs = np.array([v for r in runs for v in r.costs])
            costs = costs / bound if bound > 0 else np.full(costs.shape, math.nan)
            out.setdefault(learner, []).append((normalized.tolist(), costs.tolist()))
    return out


def _iqms(results: Sequence[RunResult], reps: int) -> tuple[dict, dict]:
    iqm_r, iqm_c = {}, {}
    for learner, tasks in sorted(_normalized(results).items()):
        shared = {"tasks": len(tasks), "runs": sum(len(r) for r, _ in tasks)}
        value, ci = stats.iqm_interval([r for r, _ in tasks], reps=reps)
        iqm_r[learner] = {"iqm": value, "ci": list(ci), **shared}
        value, ci = stats.iqm_interval([c for _, c in tasks], reps=reps)
        iqm_c[learner] = {"iqm": value, "ci": list(ci), **shared}
    return iqm_r, iqm_c


def _improvements(results: Sequence[RunResult], reps: int) -> list[dict[str, Any]]:
    tasks = _tasks(results)
    learners = sorted({r.learner for r in results})
    out = []
    for x, y in itertools.permutations(learners, 2):
        common = [by for by in tasks.values() if x in by and y in by]
        if not common:
            continue
        xs = [[v for r in by[x] for v in r.returns] for by in common]
        ys = [[v for r in by[y] for v in r.returns] for by in common]
        p, ci = stats.probability_of_improvement(xs, ys, reps=reps)
        out.append({"x": x, "y": y, "p": p, "ci": list(ci), "tasks": len(common)})
    return out


def summarize(results: Sequence[RunResult], *, reps: int = stats.BOOTSTRAP_REPS,
              skipped: Sequence[str] = ()) -> Summary:
    """The summary of finished runs (see the module docstring)."""
    if not results:
        raise ValueError("no finished run to summarize (no results.json found)")
    results = expand_bound_free(results)
    cells = _cells(results)
    iqm_return, iqm_cost = _iqms(results, reps)
    return Summary(policy=", ".join(sorted({r.policy for r in results})), cells=cells, learners=_learner_rows(cells),
                   iqm_return=iqm_return, iqm_cost=iqm_cost, improvement=_improvements(results, reps),
                   skipped=list(skipped))


# ---- formats ---------------------------------------------------------------------------------------


def _fmt(value: float, ci: Interval) -> str:
    if math.isnan(value):
        return "-"
    if ci is None:
        return f"{value:.2f}"
    return f"{value:.2f} ± {(ci[1] - ci[0]) / 2:.2f}"


def _fmt_rate(value: float, ci: Interval) -> str:
    """A cost rate: per step, so three more decimals than a cost."""
    if math.isnan(value):
        return "-"
    return f"{value:.4f}" if ci is None else f"{value:.4f} ± {(ci[1] - ci[0]) / 2:.4f}"


def _fmt_ci(value: float, ci: Sequence[float]) -> str:
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def to_markdown(summary: Summary) -> str:
    """The summary as Markdown: cells, per-learner wins and safe %, IQMs and P(X > Y)."""
    pct = stats.CONFIDENCE * 100
    lines = [f"Final evaluation ({summary.policy} policy): mean over seeds ± half-width of the {pct:g}% "
             "Student-t interval; safe: mean C < d; win: highest R among the safe learners of that env and bound. "
             f"What a mean C hides, per seed then over seeds: P(C > d), the share of evaluation episodes over d; "
             f"CVaR, the mean C of the worst {CVAR_ALPHA:.0%} of them; cost rate, cost per step over training "
             "(- where a run's results predate them).", ""]
    lines += _md_table(
        ["learner", "env", "level", "d", "seeds", "R", "C", "safe", "win", "P(C > d)", "CVaR C", "cost rate"],
        ([c.learner, c.env, _level_name(c.level), f"{c.safety_bound:g}", str(c.seeds),
          _fmt(c.return_mean, c.return_ci), _fmt(c.cost_mean, c.cost_ci), "yes" if c.safe else "no",
          "win" if c.win else "", _fmt(c.over_bound_mean, c.over_bound_ci), _fmt(c.cvar_mean, c.cvar_ci),
          _fmt_rate(c.cost_rate_mean, c.cost_rate_ci)] for c in summary.cells))
    if any(c.return_ci is None for c in summary.cells):
        lines += ["", "Cells with one seed have no interval."]
    levels = summary.levels
    header = ["learner"]
    for lv in levels:
        name = "no level" if lv is None else f"L{lv}"
        header += [f"{name} wins", f"{name} safe %"]
    header += ["total wins", "total safe %"]

    def pair(counts: dict[str, int] | None) -> list[str]:
        if not counts:
            return ["", ""]
        return [str(counts["wins"]), f"{100 * counts['safe'] / counts['cells']:.0f}"]

    lines += ["", "Per learner (the paper's Table 3 layout):", ""]
    lines += _md_table(header, ([s.learner, *[v for lv in levels for v in pair(s.levels.get(lv))], *pair(s.total)]
                                for s in summary.learners))
    lines += ["", f"Interquartile mean over all runs (seeds) of all tasks (env, d), {pct:g}% stratified-bootstrap "
              "intervals; return min–max normalized per task over every learner's runs:", ""]
    lines += _md_table(["learner", "tasks", "runs", "IQM normalized R", "IQM C/d"],
                       ([name, str(v["tasks"]), str(v["runs"]), _fmt_ci(v["iqm"], v["ci"]),
                         _fmt_ci(summary.iqm_cost[name]["iqm"], summary.iqm_cost[name]["ci"])]
                        for name, v in summary.iqm_return.items()))
    if summary.improvement:
        lines += ["", f"P(X > Y): probability that a run of X returns more than a run of Y on the same task, "
                  f"averaged over shared tasks ({pct:g}% stratified-bootstrap intervals):", ""]
        lines += _md_table(["X", "Y", "tasks", "P(X > Y)"],
                           ([p["x"], p["y"], str(p["tasks"]), _fmt_ci(p["p"], p["ci"])] for p in summary.improvement))
    if summary.skipped:
        lines += ["", f"Not finished (no results.json), left out: {', '.join(summary.skipped)}"]
    return "\n".join(lines) + "\n"


CSV_FIELDS = ("learner", "env", "level", "safety_bound", "seeds", "return_mean", "return_ci_low", "return_ci_high",
              "cost_mean", "cost_ci_low", "cost_ci_high", "safe", "win", "runs", "over_bound_mean", "over_bound_ci_low",
              "over_bound_ci_high", "cvar_mean", "cvar_ci_low", "cvar_ci_high", "cost_rate_mean", "cost_rate_ci_low",
              "cost_rate_ci_high")


def to_csv(summary: Summary) -> str:
    """One row per cell (empty interval bounds for one seed)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for c in summary.cells:
        r_ci, c_ci = c.return_ci or ("", ""), c.cost_ci or ("", "")
        tails = [x for mean, ci in ((c.over_bound_mean, c.over_bound_ci), (c.cvar_mean, c.cvar_ci),
                                    (c.cost_rate_mean, c.cost_rate_ci)) for x in ("" if math.isnan(mean) else mean, *(ci or ("", "")))]
        writer.writerow([c.learner, c.env, "" if c.level is None else c.level, c.safety_bound, c.seeds, c.return_mean,
                         *r_ci, c.cost_mean, *c_ci, c.safe, c.win, ";".join(c.runs), *tails])
    return buf.getvalue()


def summary_table(paths: Iterable[str | Path], out: str | Path | None = None, *, policy: str | None = None,
                  reps: int = stats.BOOTSTRAP_REPS) -> Summary:
    """Summarizes the finished runs in ``paths`` (run folders or sweep folders).

    ``out`` (a path prefix) writes ``<out>.csv``, ``<out>.json`` and ``<out>.md``, naming run folders
    relative to their folder. ``policy``
    (``"stochastic"``/``"deterministic"``) overrides each run's judged policy.
    """
    results, skipped = [], []
    for run_dir in find_runs(paths):
        result = read_result(run_dir, policy)
        if result is None:
            skipped.append(str(run_dir))
        else:
            results.append(result)
    summary = summarize(results, reps=reps, skipped=skipped)
    if out is not None:
        from crax.runs.files import atomic_write_bytes, write_json

        prefix = Path(out)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        portable = _relative_to(summary, prefix.parent.resolve())
        atomic_write_bytes(prefix.with_name(prefix.name + ".csv"), to_csv(portable).encode())
        write_json(prefix.with_name(prefix.name + ".json"), portable.to_dict())
        atomic_write_bytes(prefix.with_name(prefix.name + ".md"), to_markdown(portable).encode())
    return summary


def _relative_to(summary: Summary, base: Path) -> Summary:
    """``summary`` with its run folders named relative to ``base`` (the written files' folder), so that
    the files stay right when the folder moves with its runs or is committed."""
    def rel(path: str) -> str:
        return os.path.relpath(path, base)

    cells = [dataclasses.replace(c, runs=tuple(map(rel, c.runs))) for c in summary.cells]
    return dataclasses.replace(summary, cells=cells, skipped=[rel(p) for p in summary.skipped])
