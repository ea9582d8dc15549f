"""Side by side final evaluations of labelled runs (e.g. curriculum against direct training).

Usage::

    python benchmarks/compare_runs.py --runs curriculum=runs/A direct=runs/B --out curriculum_PointGoal3

``crax table`` groups runs by (learner, env, bound), so two ways of training one learner on one env
fall into one cell; this keeps them apart under their labels. For each run: mean episodic R and C
of the final evaluation over seeds with 95% Student-t intervals, and *safe* (mean C < d). Writes
``benchmarks/results/<OUT>.{md,json}`` (the table in docs/results.md is generated from the ``.md``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import tyro

from crax.runs.checkpoint import read_config
from crax.studies.collect import read_result
from crax.studies.stats import mean_interval

RESULTS = Path(__file__).parent / "results"


@dataclasses.dataclass(frozen=True)
class Args:
    runs: tuple[str, ...]
    """LABEL=RUN_DIR pairs."""
    out: str
    """Output stem under benchmarks/results/."""


def _fmt(mean: float, ci: tuple[float, float] | None) -> str:
    return f"{mean:.2f}" if ci is None else f"{mean:.2f} ± {(ci[1] - ci[0]) / 2:.2f}"


def main(args: Args) -> None:
    rows = []
    for pair in args.runs:
        label, sep, run_dir = pair.partition("=")
        if not sep:
            raise SystemExit(f"--runs expects LABEL=RUN_DIR, got {pair!r}")
        result = read_result(run_dir)
        if result is None:
            raise SystemExit(f"{run_dir} has no results.json (not finished)")
        record = read_config(run_dir)
        r_mean, r_ci = mean_interval(result.returns)
        c_mean, c_ci = mean_interval(result.costs)
        rows.append({"label": label, "learner": result.learner, "env": result.env, "stages": record.get("stages"),
                     "env_steps": result.env_steps, "seeds": len(result.returns), "safety_bound": result.safety_bound,
                     "policy": result.policy, "return_mean": r_mean, "return_ci": r_ci, "cost_mean": c_mean,
                     "cost_ci": c_ci, "safe": c_mean < result.safety_bound, "returns": result.returns,
                     "costs": result.costs})
    lines = ["| run | learner | trained on | steps per seed | seeds | R | C | safe (C < d) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        where = " → ".join(r["stages"]) if r["stages"] else r["env"]
        lines.append(f"| {r['label']} | {r['learner']} | {where} | {r['env_steps']:,} | {r['seeds']} | "
                     f"{_fmt(r['return_mean'], r['return_ci'])} | {_fmt(r['cost_mean'], r['cost_ci'])} | "
                     f"{'yes' if r['safe'] else 'no'} (d = {r['safety_bound']:g}) |")
    stem = RESULTS / args.out
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    stem.with_suffix(".json").write_text(json.dumps(rows, indent=2))
    print("\n".join(lines))


if __name__ == "__main__":
    main(tyro.cli(Args))
