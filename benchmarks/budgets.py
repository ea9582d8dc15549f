"""One budget per constraint against one summed budget: per-term episodic costs relative to their budgets.

Usage::

    python benchmarks/budgets.py --env PointGoal2 --budgets cost/contact=5 cost/cylinder_zones=20

Trains the learner twice with the same seed and batch: once with ``--budgets`` (one multiplier per
term) and once with ``safety_bound`` = the sum of the budgets (one multiplier for the summed cost).
Per term, the episodic cost is averaged over the training episodes of the last ``--last-fraction``
of the run (``episode/cost/<term>``) and divided by the term's budget. Writes
``benchmarks/results/budgets_<ENV>.{json,md}``; the table in docs/results.md is generated from the ``.md``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np
import tyro

from crax import runs

RESULTS = Path(__file__).parent / "results"


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal2"
    """Env id."""
    learner: str = "ppo-lag"
    """A learner that takes per-term budgets (ppo-lag, ppo-pid, p3o, focops, crpo)."""
    budgets: tuple[str, ...] = ("cost/contact=5", "cost/cylinder_zones=20")
    """Per-term budgets, cost/<term>=<d>; the summed run's bound is their sum."""
    total_steps: int = 1_000_000
    num_envs: int = 256
    batch_size: int = 128
    num_minibatches: int = 16
    seed: int = 0
    last_fraction: float = 0.2
    """Share of the run (its last iterations) over which the training episodes are averaged."""


def _term_costs(history: list[dict], terms: list[str], last_fraction: float) -> dict[str, float]:
    rows = [r for r in history if r["seed"] == 0 and "episode/return" in r]
    last = rows[int(len(rows) * (1 - last_fraction)):]
    return {t: float(np.mean([r[f"episode/{t}"] for r in last])) for t in terms}


def main(args: Args) -> None:
    cls = runs.get_learner(args.learner)
    common = dict(total_steps=args.total_steps, num_envs=args.num_envs, batch_size=args.batch_size,
                  num_minibatches=args.num_minibatches, seed=args.seed)
    budgets = cls.Config(**common, budgets=args.budgets).budget_bounds
    variants = {"per-term budgets": cls.Config(**common, budgets=args.budgets),
                "summed budget": cls.Config(**common, safety_bound=sum(budgets.values()))}
    rows = []
    for name, config in variants.items():
        t = time.perf_counter()
        result = runs.train(args.learner, config, args.env, runs_root=RESULTS / "runs")
        final = result.final[0]
        costs = _term_costs(result.history, list(budgets), args.last_fraction)
        last = [r for r in result.history if r["seed"] == 0 and "loss/policy" in r][-1]
        rows.append({"variant": name, "return": final["return"], "cost": final["cost"],
                     "term_costs": costs, "term_over_budget": {t: costs[t] / budgets[t] for t in budgets},
                     "multipliers": {k.removeprefix("multiplier/"): v for k, v in last.items()
                                     if k.startswith("multiplier/")},
                     "minutes": (time.perf_counter() - t) / 60, "load_1min_at_end": round(os.getloadavg()[0], 1),
                     "run_dir": str(result.run_dir.relative_to(RESULTS.parent.parent))})
        print(f"{name}: R {final['return']:.2f} C {final['cost']:.2f} terms {costs}", flush=True)

    stem = RESULTS / f"budgets_{args.env}"
    terms = list(budgets)
    head = " | ".join(f"{t} (budget {budgets[t]:g})" for t in terms)
    table = [f"{args.learner} on {args.env}, {args.total_steps:,} steps, seed {args.seed}. Per-term cost: mean "
             f"episodic cost of the training episodes in the last {args.last_fraction:.0%} of the run, and its "
             "ratio to the term's budget. R, C: final evaluation (stochastic policy).", "",
             f"| variant | {head} | R | C (summed bound {sum(budgets.values()):g}) | multipliers at the end |",
             "|---|" + "---|" * len(terms) + "---|---|---|"]
    for r in rows:
        per = " | ".join(f"{r['term_costs'][t]:.1f} ({r['term_over_budget'][t]:.2f}×)" for t in terms)
        mult = ", ".join(f"{k} {v:.2f}" for k, v in r["multipliers"].items())
        table.append(f"| {r['variant']} | {per} | {r['return']:.1f} | {r['cost']:.1f} | {mult} |")
    stem.with_suffix(".md").write_text("\n".join(table) + "\n")
    stem.with_suffix(".json").write_text(json.dumps({"args": dataclasses.asdict(args), "budgets": budgets,
                                                     "rows": rows}, indent=2))
    print("\n".join(table))


if __name__ == "__main__":
    main(tyro.cli(Args))
