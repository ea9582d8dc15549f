"""Reproduces cells of OmniSafe's published on-policy benchmark with crax's ``--preset omnisafe``, and
writes the table that sets crax's numbers beside OmniSafe's.

Usage (from the repository root)::

    .venv/bin/python benchmarks/omnisafe/reproduce.py run ppo-lag SafetyPointGoal1-v0   # starts or resumes a cell
    .venv/bin/python benchmarks/omnisafe/reproduce.py table                               # rewrites the table

A cell is one learner on one env id: ``crax train LEARNER --env ID --preset omnisafe --num-seeds 3``
at OmniSafe's 1e7 steps, its run folder under ``benchmarks/results/omnisafe_runs/<learner>-<env>``
(committed, so a cell that spans sessions resumes: ``run`` continues it with ``crax train --resume``).
One flag differs from the preset: ``--num-envs 64`` (OmniSafe steps one env; the iteration is the
same 19,968 steps, as 64 envs × 312 steps, because a single MJX env on a CPU runs at a few hundred
steps a second, which would take days a cell; the episodes still run whole, across iterations).

The table (``benchmarks/results/omnisafe_reproduction.md``, shown in docs/results.md) gives, per cell,
OmniSafe's published mean ± std (``docs/reference/omnisafe_on_policy.json``) beside crax's: the
training episodes' return and cost over each seed's last 10 iterations (about 200 episodes; OmniSafe
reports its training episodes' EpRet and EpCost), mean ± std over the seeds, with the steps done and
the hours the cell has taken on this machine so far.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNS = ROOT / "benchmarks" / "results" / "omnisafe_runs"
TABLE = ROOT / "benchmarks" / "results" / "omnisafe_reproduction.md"
PUBLISHED = ROOT / "docs" / "reference" / "omnisafe_on_policy.json"

CELLS: tuple[tuple[str, str, str], ...] = (
    # crax learner, env id, OmniSafe's algorithm name in its table
    ("ppo-lag", "SafetyPointGoal1-v0", "PPOLag"),
    ("cppo-pid", "SafetyPointGoal1-v0", "CPPOPID"),
    ("cpo", "SafetyPointGoal1-v0", "CPO"),
    ("ppo-lag", "SafetyHopperVelocity-v1", "PPOLag"),
    ("cppo-pid", "SafetyHopperVelocity-v1", "CPPOPID"),
    ("cpo", "SafetyHopperVelocity-v1", "CPO"),
)
"""The cells the issue asks for: PPO-Lag, CPPO-PID and CPO on one navigation and one velocity task."""

SEEDS = 3
NUM_ENVS = 64
LAST = 10
"""Iterations at the end of a run whose training episodes make its final numbers."""


def run_dir(learner: str, env_id: str) -> pathlib.Path:
    return RUNS / f"{learner}-{env_id}"


def run(learner: str, env_id: str, extra: list[str]) -> int:
    """Starts the cell, or resumes it where its last checkpoint left it."""
    folder = run_dir(learner, env_id)
    crax = [sys.executable, "-m", "crax.cli"]
    if (folder / "config.json").exists():
        cmd = [*crax, "train", "--resume", str(folder), "--no-progress", *extra]
    else:
        cmd = [*crax, "train", learner, "--env", env_id, "--preset", "omnisafe", "--num-seeds", str(SEEDS),
               "--num-envs", str(NUM_ENVS), "--num-evals", "1", "--run-dir", str(folder), "--no-progress", *extra]
    print(" ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT)


def final(folder: pathlib.Path) -> dict[str, float] | None:
    """A cell's numbers from its metrics: per seed the episode-weighted mean return and cost of its last
    ``LAST`` iterations, then mean and std over seeds; the steps done, the hours taken and whether the run
    has ended (its last iteration is the last whole one under 1e7 steps)."""
    path = folder / "metrics.jsonl"
    if not path.exists():
        return None
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "episode/return" in r]
    if not rows:
        return None
    seeds = sorted({r["seed"] for r in rows})
    steps = max(r["step"] for r in rows)
    per_seed = []
    seconds = 0.0
    for s in seeds:
        mine = sorted((r for r in rows if r["seed"] == s), key=lambda r: r["step"])
        if s == seeds[0]:
            previous = 0
            for r in mine:
                # perf/steps_per_second is the rate over all seeds; step counts one seed's steps
                seconds += (r["step"] - previous) * len(seeds) / max(r.get("perf/steps_per_second", math.inf), 1e-9)
                previous = r["step"]
        tail = mine[-LAST:]
        weight = sum(r["episode/count"] for r in tail) or 1.0
        per_seed.append((sum(r["episode/return"] * r["episode/count"] for r in tail) / weight,
                         sum(r["episode/cost"] * r["episode/count"] for r in tail) / weight))

    def stats(i: int) -> tuple[float, float]:
        values = [p[i] for p in per_seed]
        mean = sum(values) / len(values)
        return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))

    (ret, ret_sd), (cost, cost_sd) = stats(0), stats(1)
    done = (folder / "results.json").exists()  # written when the run's last iteration and final evaluation end
    return {"return": ret, "return_std": ret_sd, "cost": cost, "cost_std": cost_sd, "steps": steps,
            "seeds": len(seeds), "hours": seconds / 3600, "done": done}


def table() -> str:
    published = json.loads(PUBLISHED.read_text())["algorithms"]
    lines = ["| Learner | Env | OmniSafe return | crax return | OmniSafe cost | crax cost | steps done | hours |",
             "|---|---|---|---|---|---|---|---|"]
    for learner, env_id, algorithm in CELLS:
        ref = published[algorithm][env_id]
        mine = final(run_dir(learner, env_id))
        theirs_r = f"{ref['return'][0]:.2f} ± {ref['return'][1]:.2f}"
        theirs_c = f"{ref['cost'][0]:.2f} ± {ref['cost'][1]:.2f}"
        if mine is None:
            lines.append(f"| {learner} | {env_id} | {theirs_r} | not run | {theirs_c} | not run | 0 | 0 |")
            continue
        lines.append(f"| {learner} | {env_id} | {theirs_r} | {mine['return']:.2f} ± {mine['return_std']:.2f} | "
                     f"{theirs_c} | {mine['cost']:.2f} ± {mine['cost_std']:.2f} | "
                     f"{mine['steps'] / 1e6:.2f}M of 10M ({mine['seeds']} seeds{'; done' * mine['done']}) | "
                     f"{mine['hours']:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="start or resume one cell")
    p_run.add_argument("learner")
    p_run.add_argument("env")
    p_run.add_argument("extra", nargs=argparse.REMAINDER, help="more crax train flags (e.g. --total-steps 2e6)")
    sub.add_parser("table", help="rewrite benchmarks/results/omnisafe_reproduction.md")
    args = parser.parse_args()
    if args.command == "run":
        if (args.learner, args.env) not in {(c[0], c[1]) for c in CELLS}:
            raise SystemExit(f"not a cell of the reproduction: {args.learner} {args.env}; the cells are "
                             + ", ".join(f"{c[0]} {c[1]}" for c in CELLS))
        raise SystemExit(run(args.learner, args.env, args.extra))
    TABLE.write_text(table())
    print(f"wrote {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
