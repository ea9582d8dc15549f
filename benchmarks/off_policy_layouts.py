"""Off-policy layouts by measurement (issue 21): envs, steps per env, gradient steps and batch size for a CPU.

Usage::

    python benchmarks/off_policy_layouts.py --env PointGoal1                      # the default grid, 240 s each
    python benchmarks/off_policy_layouts.py --env AntVelocity1 --layouts 256x4x8x512 1024x4x16x1024

A layout is ``ENVSxUNROLLxUPDATESxBATCH`` (``num_envs``, ``unroll_length``, ``updates_per_iteration``,
``batch_size``). Every layout gets the same wall-clock budget of training, compile excluded, which
is what a CPU user spends: a timed call first measures the layout's iterations per second (its
programs then come from the persistent compile cache), that sizes the run's step budget, and
``crax.runs.train`` trains ``--num-seeds`` vmapped seeds with everything else at the learner's
defaults, evaluated ``--num-evals`` times. One row per layout is appended to
``benchmarks/results/off_policy_layouts.jsonl`` (one sitting: one ``sitting`` stamp), with the
evaluation curve; docs/learners.md's ``off-policy-layouts-<ENV>`` table is generated from the latest
sitting on each env. Run folders go to a temporary directory.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import tempfile
import time
from pathlib import Path

import jax
import numpy as np
import tyro

import crax
from crax import runs
from crax.bench import host_cpu, time_calls
from crax.learners import make_trainer
from crax.reports.arguments import parse_layout, parse_overrides
from crax.studies.collect import training_seconds


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id."""
    learner: str = "sac-lag"
    """Registered off-policy learner (crax list)."""
    layouts: tuple[str, ...] = ("64x4x8x512", "128x4x8x512", "256x4x4x512", "256x4x8x512", "256x4x16x512",
                                "256x4x8x1024", "1024x4x16x1024")
    """Layouts to compare, ``ENVSxUNROLLxUPDATESxBATCH`` each."""
    set: tuple[str, ...] = ()
    """``FIELD=VALUE`` overrides of the learner's config for every layout (e.g. ``init_alpha=0.01``)."""
    budget_s: float = 240.0
    """Seconds of training per layout (compile and evaluations excluded)."""
    num_seeds: int = 2
    """Seeds trained together (vmapped) per layout."""
    num_evals: int = 6
    """Evaluations per run (the last one gives the final return and cost)."""
    eval_envs: int = 32
    """Evaluation episodes per seed and evaluation."""
    out: Path = Path(__file__).parent / "results" / "off_policy_layouts.jsonl"
    """JSON-lines file the rows are appended to."""


def iterations_per_second(cls, config, env) -> float:
    """Training iterations per second of ``config`` (all seeds): one call of ``iterations_per_call``
    iterations timed twice after a warm-up, by train_throughput.py's timer."""
    trainer = make_trainer(cls, config, env)
    n = config.iterations_per_call
    return n / time_calls(trainer.run, trainer.init(jax.random.key(0)), n, repeats=2)


def measure(args: Args, cls, overrides: dict[str, object], layout: str, sitting: str, runs_root: Path) -> dict:
    knobs = {**overrides, **parse_layout(layout)}
    env = crax.make(args.env)
    probe = cls.Config(**knobs, num_seeds=args.num_seeds, num_evals=0, learning_starts=0)
    per_s = iterations_per_second(cls, probe, env)
    steps_per_iteration = probe.steps_per_iteration
    iterations = max(int(args.budget_s * per_s), 1)
    config = cls.Config(**knobs, num_seeds=args.num_seeds, num_evals=args.num_evals, eval_envs=args.eval_envs,
                        total_steps=iterations * steps_per_iteration)
    t = time.perf_counter()
    result = runs.train(cls, config, args.env, run_dir=runs_root / layout, progress=False)
    wall_s = time.perf_counter() - t
    trained_s = ([0.0] + training_seconds(result.history, args.num_seeds)[1])[-1]
    final = result.final
    return {
        "env": args.env, "learner": args.learner, "layout": layout, **knobs, "set": list(args.set),
        "replay_ratio": round(knobs["updates_per_iteration"] * knobs["batch_size"] / steps_per_iteration, 2),
        "num_seeds": args.num_seeds, "budget_s": args.budget_s, "env_steps": result.env_steps,
        "steps_per_s": round(steps_per_iteration * per_s), "trained_s": round(trained_s, 1), "wall_s": round(wall_s, 1),
        "return": [round(f["return"], 2) for f in final], "cost": [round(f["cost"], 2) for f in final],
        "safety_bound": config.safety_bound,
        "eval_policy": config.eval_policy,
        "evals": [{"step": e["step"], "return": round(float(np.mean(e[config.eval_policy]["return"])), 2),
                   "cost": round(float(np.mean(e[config.eval_policy]["cost"])), 2)} for e in result.evals],
        "cpu": host_cpu(), "cpu_count": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
        "date": datetime.date.today().isoformat(), "sitting": sitting,
    }


def main(args: Args) -> list[dict]:
    from crax.learners import OffPolicyLearner
    from crax.plugins import registry

    try:  # bad input stops the sitting before its first run
        cls = runs.get_learner(args.learner)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    if not issubclass(cls, OffPolicyLearner):
        off_policy = sorted(n for n, c in registry().learners.items() if issubclass(c, OffPolicyLearner))
        raise SystemExit(f"{args.learner} is not an off-policy learner; off-policy learners: {', '.join(off_policy)}")
    overrides = parse_overrides(args.set, cls.Config)
    for layout in args.layouts:
        parse_layout(layout)
    sitting = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    rows = []
    with tempfile.TemporaryDirectory(prefix="crax-layouts-") as tmp:
        for layout in args.layouts:
            row = measure(args, cls, overrides, layout, sitting, Path(tmp))
            rows.append(row)
            print(f"{layout:>16}: {row['steps_per_s']:>6,} steps/s, {row['env_steps']:>9,} steps in {row['trained_s']:.0f} s, "
                  f"return {np.mean(row['return']):7.2f}, cost {np.mean(row['cost']):6.2f}  (load {row['load_1min']})",
                  flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with open(args.out, "a") as f:  # row by row: a sitting stopped midway keeps what it measured
                f.write(json.dumps(row) + "\n")
    return rows


if __name__ == "__main__":
    main(tyro.cli(Args))
