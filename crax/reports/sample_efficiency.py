"""The sample-efficiency study of ``benchmarks/sample_efficiency.py`` (issue 21): the off-policy family
against PPO-Lag, return and cost against env steps and against training minutes on this machine,
several seeds, one sitting.

Each learner trains ``--num-seeds`` vmapped seeds for its step budget (``--total-steps``, or its own
``--steps LEARNER=STEPS``) at its defaults, except ``--set`` overrides (``FIELD=VALUE`` for every
learner with the field, ``LEARNER:FIELD=VALUE`` for one; by default PPO-Lag runs the quick start's
batch, :data:`crax.cli.quick_start.QUICK_START_BATCH`). Run folders are kept under
``benchmarks/results/runs/sample_efficiency/<env>-<learner>`` (:func:`runs_root`): the same command again resumes an
interrupted learner and reuses a finished one, so a sitting can span sessions (each row records
when its learner finished and the load then, kept in the run folder's ``sitting.json``; a run folder
trained elsewhere has neither).

*Training minutes* sum the training calls' own time (from each iteration's
``perf/steps_per_second``): compiles and evaluations are left out, as a user's wall clock would not
leave them, but they do not depend on the learner's sample efficiency. *Reaching the reference*:
the first logged step at which the seeds' mean training-episode return, averaged over the last
``--window-steps`` env steps, reaches the reference learner's (PPO-Lag's) same average at its last
step while the same average of the episodic cost is at most the bound. Writes
``benchmarks/results/sample_efficiency_<env>.json`` and ``.png``; docs/learners.md's
``sample-efficiency-<ENV>`` table is generated from the JSON.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import sys
from pathlib import Path

import jax
import numpy as np
import tyro

from crax import runs
from crax.cli.quick_start import batch_sets
from crax.reports.arguments import parse_sets, parse_steps
from crax.runs.checkpoint import CONFIG_FILE, stored_differences
from crax.runs.files import read_json, write_json
from crax.runs.metrics import read_metrics
from crax.studies.cells import run_cell
from crax.studies.collect import read_result, training_seconds
from crax.studies.stats import mean_interval

SITTING = "sitting.json"
"""The file in a run folder recording when the run finished and the machine's load then."""


def runs_root(results: Path) -> Path:
    """Where the study's run folders go: ``results/runs/sample_efficiency/<env>-<learner>``."""
    return results / "runs" / "sample_efficiency"


@dataclasses.dataclass(frozen=True)
class Args:
    """The study's command-line arguments."""

    env: str = "PointGoal1"
    """Env id."""
    learners: tuple[str, ...] = ("ppo-lag", "sac-lag", "td3-lag")
    """Registered learners to compare (the reference among them)."""
    reference: str = "ppo-lag"
    """The learner whose final training return the others must reach under the bound."""
    total_steps: float = 2e6
    """Env steps per seed for every learner without its own ``--steps``."""
    steps: tuple[str, ...] = ()
    """``LEARNER=STEPS`` budgets, e.g. ``sac-lag=1e6``."""
    set: tuple[str, ...] = batch_sets()
    """Config overrides: ``FIELD=VALUE`` for every learner with the field, ``LEARNER:FIELD=VALUE`` for one."""
    num_seeds: int = 3
    """Seeds per learner, trained together under jax.vmap."""
    num_evals: int = 5
    """Evaluations per run (the last gives the final return and cost)."""
    window_steps: float = 1e5
    """Env steps over which the training curves are averaged to decide when a learner reaches the reference."""


def curves(run_dir: Path, seeds: int) -> dict[str, np.ndarray]:
    """One run's curves on its logged steps: cumulative training minutes, and the seeds' mean
    training-episode return and cost (each seed's latest finished episodes; NaN until every seed
    has finished one)."""
    records = read_metrics(run_dir)
    by_key: dict[tuple[int, int], dict] = {}
    for r in records:  # an iteration's record and its evaluation's share a step: merge them
        if "seed" in r:
            by_key.setdefault((int(r["seed"]), int(r["step"])), {}).update(r)
    steps, seconds = training_seconds(records, seeds)
    ret, cost = np.full((len(steps), seeds), np.nan), np.full((len(steps), seeds), np.nan)
    for i, t in enumerate(steps):
        for s in range(seeds):
            r = by_key.get((s, t), {})
            if "episode/return" in r and math.isfinite(r["episode/return"]):
                ret[i, s], cost[i, s] = r["episode/return"], r["episode/cost"]
            elif i:
                ret[i, s], cost[i, s] = ret[i - 1, s], cost[i - 1, s]
    return {"step": np.asarray(steps, np.float64), "minutes": np.asarray(seconds) / 60, "return": ret.mean(axis=1),
            "cost": cost.mean(axis=1)}


def smoothed(step: np.ndarray, values: np.ndarray, window: float) -> np.ndarray:
    """At each step, the mean of ``values`` over the logged steps in (step − window, step]."""
    return np.array([np.mean(values[(step > t - window) & (step <= t)]) for t in step])


def reach(curve: dict[str, np.ndarray], target: float, bound: float, window: float) -> dict[str, float] | None:
    """The first step (and training minute) where the averaged return ≥ ``target`` and the averaged cost ≤ ``bound``."""
    ret, cost = smoothed(curve["step"], curve["return"], window), smoothed(curve["step"], curve["cost"], window)
    hit = np.flatnonzero((ret >= target) & (cost <= bound))
    if not hit.size:
        return None
    i = int(hit[0])
    return {"steps": int(curve["step"][i]), "minutes": float(curve["minutes"][i])}


def train_one(args: Args, name: str, steps: int, overrides: dict[str, object], results: Path) -> dict:
    """Trains (or resumes, or reuses) one learner's run under ``results/runs/``; its row without the reach columns."""
    cls = runs.get_learner(name)
    config = cls.Config(**{**overrides, "total_steps": steps, "num_seeds": args.num_seeds, "num_evals": args.num_evals})
    run_dir = runs_root(results) / f"{args.env}-{name}"
    if (run_dir / CONFIG_FILE).exists():  # resumed or reused: only a longer budget may differ
        changed = stored_differences(run_dir, config)
        if changed:
            raise SystemExit(f"{run_dir} was trained with other settings {changed} (stored, asked); delete it "
                             "to train again")
    status = run_cell(str(run_dir), name, args.env, config, progress=True)
    if status["status"] != "done":
        raise SystemExit(f"{name} on {args.env} failed ({status['action']}): {status['error']}")
    result = read_result(run_dir)
    assert result is not None  # run_cell reported it done
    r_mean, r_ci = mean_interval(result.returns)
    c_mean, c_ci = mean_interval(result.costs)
    return {"learner": name, "env_steps": result.env_steps, "num_seeds": len(result.returns),
            "return": r_mean, "return_ci": r_ci, "cost": c_mean, "cost_ci": c_ci, "policy": result.policy,
            "safety_bound": result.safety_bound, "safe": c_mean < result.safety_bound,
            "action": status["action"], **sitting(run_dir, trained=status["action"] != "skip"),
            "device": jax.devices()[0].device_kind, "run_dir": str(run_dir.relative_to(results.parent.parent))}


def sitting(run_dir: Path, trained: bool) -> dict:
    """When the run finished and the machine's load then: recorded into ``run_dir/sitting.json`` by the
    call that trained it, read back by a later call that reuses it (both None for a run trained
    elsewhere, which recorded neither)."""
    path = run_dir / SITTING
    if trained:
        record = {"finished": datetime.datetime.now().isoformat(timespec="minutes"),
                  "load_1min_now": round(os.getloadavg()[0], 1)}
        write_json(path, record, indent=None)
        return record
    if path.exists():
        return read_json(path, "a sample-efficiency sitting record")
    return {"finished": None, "load_1min_now": None}


def main(args: Args, results: Path) -> dict:
    """Trains (or reuses) each learner, finds where each reaches the reference, and writes
    ``results/sample_efficiency_<env>.json`` and ``.png``; returns what the JSON holds."""
    if args.reference not in args.learners:
        raise SystemExit(f"--reference {args.reference!r} is not one of --learners {list(args.learners)}")
    budgets = parse_steps(args.steps, args.learners, args.total_steps)
    overrides = parse_sets(args.set, args.learners)
    rows, curve = [], {}
    for name in args.learners:
        rows.append(train_one(args, name, budgets[name], overrides[name], results))
        curve[name] = curves(runs_root(results) / f"{args.env}-{name}", args.num_seeds)
        rows[-1]["minutes"] = float(curve[name]["minutes"][-1])
        print(f"{name}: return {rows[-1]['return']:.2f}, cost {rows[-1]['cost']:.2f}, "
              f"{rows[-1]['minutes']:.1f} training minutes", flush=True)
    bound = rows[0]["safety_bound"]
    ref = curve[args.reference]
    target = float(smoothed(ref["step"], ref["return"], args.window_steps)[-1])
    for row in rows:
        row["reaches_reference"] = reach(curve[row["learner"]], target, bound, args.window_steps)
    out = {"args": dataclasses.asdict(args), "env": args.env, "target_return": target, "safety_bound": bound,
           "rows": rows, "curves": {n: {k: [round(float(x), 4) for x in v] for k, v in c.items()} for n, c in curve.items()}}
    stem = f"sample_efficiency_{args.env.replace(':', '_')}"  # an env given as module:Class too
    (results / f"{stem}.json").write_text(json.dumps(out, indent=1) + "\n")
    plot(out, results / f"{stem}.png")
    return out


def plot(out: dict, path: Path) -> None:
    """Return and cost against env steps and against training minutes, every learner, into ``path``."""
    from matplotlib.figure import Figure  # drawn without pyplot: no backend is chosen for the process

    fig = Figure(figsize=(12, 8))
    axes = fig.subplots(2, 2, sharey="row")
    for name, c in out["curves"].items():
        for col, x in enumerate(("step", "minutes")):
            axes[0, col].plot(c[x], c["return"], label=name)
            axes[1, col].plot(c[x], c["cost"], label=name)
    for col, x in enumerate(("env steps per seed", "training minutes (compile and evaluations left out)")):
        axes[1, col].axhline(out["safety_bound"], color="k", linestyle="--", linewidth=1, label="bound")
        axes[1, col].set_xlabel(x)
    axes[0, 0].set_ylabel("episodic return (mean of seeds)")
    axes[1, 0].set_ylabel("episodic cost (mean of seeds)")
    axes[0, 0].axhline(out["target_return"], color="gray", linestyle=":", linewidth=1, label="reference's final")
    axes[0, 0].legend(fontsize=8)
    axes[1, 1].legend(fontsize=8)
    fig.suptitle(f"{out['env']}: training episodes, {out['args']['num_seeds']} seeds")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def cli(results: Path) -> None:
    """The command line of ``benchmarks/sample_efficiency.py``: ``main`` on the parsed arguments, into
    ``results``; Ctrl-C or SIGTERM (after the learner's run has checkpointed itself) ends with how to
    resume instead of a traceback."""
    args = tyro.cli(Args)
    try:
        main(args, results)
    except KeyboardInterrupt as stop:
        print(f"stopped; `python benchmarks/sample_efficiency.py --env {args.env}` resumes the sitting",
              file=sys.stderr)
        raise SystemExit(143 if isinstance(stop, runs.Terminated) else 130) from None
