"""Learning benchmark: PPO and every safe learner for the same steps on one env (default HalfCheetahVelocity1).

Usage::

    python benchmarks/learning.py                                  # all built-in learners, 2e6 steps each
    python benchmarks/learning.py --learners ppo ppo-lag --total-steps 500000
    python benchmarks/learning.py --env PointGoal1 --learners ppo-lag --sensor camera:width=32,height=32 \
        --tag=-camera32 --compare-with PointGoal1          # from pixels, beside the state-based run

Each learner trains with the SPEC defaults except the knobs below (smaller batches so that a run
fits in about 20 minutes on a 2-core CPU). Prints the final episodic return and cost of each
learner as a table and writes them to ``benchmarks/results/learning_<env>.json`` (with the
training-episode curves; the ``learning-<env>`` tables of the pages are generated from it) and their
training curves to ``benchmarks/results/learning_<env>.png``. Run folders go under
``benchmarks/results/runs/``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import jax  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import tyro  # noqa: E402

from crax import runs  # noqa: E402
from crax.reports.arguments import parse_field_values  # noqa: E402
from crax.tasks import compose  # noqa: E402

RESULTS = Path(__file__).parent / "results"


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "HalfCheetahVelocity1"
    """Env id."""
    learners: tuple[str, ...] = ("ppo", "ppo-cost", "ppo-lag", "ppo-pid", "ppo-saute", "p3o", "focops", "crpo")
    """Registered learner names to compare."""
    total_steps: int = 2_000_000
    """Environment steps per learner."""
    num_envs: int = 256
    """Parallel envs."""
    batch_size: int = 128
    """Trajectory segments per minibatch (Brax convention)."""
    num_minibatches: int = 16
    """Minibatches per epoch."""
    unroll_length: int = 8
    """Segment length (one iteration = batch_size × num_minibatches × unroll_length steps)."""
    critic_hidden: tuple[int, ...] = (256, 256, 256, 256, 256)
    """Critic hidden sizes."""
    num_evals: int = 5
    """Evaluations per run."""
    seed: int = 0
    """Seed of every run."""
    desync_episodes: bool = True
    """Start training envs at random steps of their first episode (decision 57)."""
    tag: str = ""
    """Suffix of the output files (e.g. ``-sync`` for a run with --no-desync-episodes)."""
    last_iterations: int = 20
    """Iterations over which the spread of each multiplier is reported."""
    set: tuple[str, ...] = ()
    """Config overrides FIELD=VALUE for every learner that has the field, e.g. ``--set saute_discount=0.999``."""
    sensor: tuple[str, ...] = ()
    """Sensors added to the env, as ``crax train --sensor`` takes them (e.g. ``camera:width=32,height=32``:
    the learners then see a dict observation through the shared encoder)."""
    env_param: tuple[str, ...] = ()
    """Task parameters NAME=VALUE, as ``crax train --env-param`` takes them (e.g. ``vision_size=64``)."""
    run_dir: str = ""
    """Train the (one) learner in this run folder, resuming it where its last checkpoint left it when it
    holds a run (SIGTERM checkpoints it): a run longer than one sitting. Its minutes are then summed from
    the run's own rates. Default: a new folder under ``benchmarks/results/runs/``."""
    plot_only: bool = False
    """Redraw ``learning_<env><tag>.png`` from its ``.json`` (with ``compare_with``) without training."""
    compare_with: str = ""
    """Another sitting's results (``learning_<this>.json``, e.g. ``PointGoal1``) whose curves of the same
    learners the figure draws dashed beside these (e.g. a state-based run beside a pixel run)."""


def _spread(history: list[dict], last: int) -> dict[str, dict[str, float]]:
    """Mean, standard deviation, min and max of each multiplier over the last ``last`` iterations of seed 0."""
    rows = [r for r in history if r["seed"] == 0 and "loss/policy" in r][-last:]
    out = {}
    for key in sorted({k for r in rows for k in r if k.startswith("multiplier/")}):
        v = np.array([r[key] for r in rows])
        out[key.split("/", 1)[1]] = {"mean": float(v.mean()), "std": float(v.std()), "min": float(v.min()),
                                     "max": float(v.max())}
    return out


def training_minutes(history: list[dict]) -> float:
    """Minutes of training in a run's metrics: each iteration's steps over its logged rate (seed 0's rows;
    a rate counts every seed's steps), so that a run resumed over several sittings counts its training only."""
    rows = sorted((r for r in history if r["seed"] == 0 and "perf/steps_per_second" in r), key=lambda r: r["step"])
    seeds = 1 + max((r["seed"] for r in history), default=0)
    seconds, previous = 0.0, 0
    for r in rows:
        seconds += (r["step"] - previous) * seeds / max(r["perf/steps_per_second"], 1e-9)
        previous = r["step"]
    return seconds / 60


def plot(stem: Path, args: Args, bound: float) -> None:
    """The training curves of ``stem``'s results (``<stem>.json``) to ``<stem>.png``, with ``compare_with``'s
    curves of the same learners dashed."""
    curves = json.loads(stem.with_suffix(".json").read_text())["curves"]
    other = (json.loads((RESULTS / f"learning_{args.compare_with}.json").read_text())["curves"]
             if args.compare_with else {})
    fig, (ax_r, ax_c) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, c in curves.items():
        line = ax_r.plot(c["step"], c["return"], label=name + args.tag)[0]
        ax_c.plot(c["step"], c["cost"], label=name + args.tag)
        if name in other:
            o, label = other[name], f"{name} ({args.compare_with})"
            ax_r.plot(o["step"], o["return"], "--", color=line.get_color(), label=label)
            ax_c.plot(o["step"], o["cost"], "--", color=line.get_color(), label=label)
    ax_c.axhline(bound, color="k", linestyle="--", linewidth=1, label=f"bound d={bound:g}")
    ax_r.set(title=f"{args.env}{args.tag}: episodic return", xlabel="env steps")
    ax_c.set(title="episodic cost", xlabel="env steps")
    ax_c.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(stem.with_suffix(".png"), dpi=120)


def main(args: Args) -> None:
    if args.plot_only:
        stem = RESULTS / f"learning_{args.env}{args.tag}"
        plot(stem, args, runs.get_learner(args.learners[0]).Config().safety_bound)
        return
    overrides = parse_field_values(args.set)
    unknown = [f for f in overrides
               if not any(f in runs.get_learner(n).Config.__dataclass_fields__ for n in args.learners)]
    if unknown:
        raise SystemExit(f"--set: no learner of {list(args.learners)} has the config field(s) {unknown}")
    env_kwargs = {**compose.parse_flags(sensors=args.sensor), **compose.parse_env_params(args.env_param)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.run_dir and len(args.learners) != 1:
        raise SystemExit("--run-dir holds one learner's run: give one --learners name")
    rows, curves = [], {}
    for name in args.learners:
        cls = runs.get_learner(name)
        config = cls.Config(total_steps=args.total_steps, num_envs=args.num_envs, batch_size=args.batch_size,
                            num_minibatches=args.num_minibatches, unroll_length=args.unroll_length,
                            critic_hidden=args.critic_hidden, num_evals=args.num_evals, seed=args.seed,
                            desync_episodes=args.desync_episodes,
                            **{k: v for k, v in overrides.items() if k in cls.Config.__dataclass_fields__})
        t = time.perf_counter()
        if args.run_dir:
            resume = (Path(args.run_dir) / "config.json").exists()
            result = runs.train(name, config, args.env, run_dir=args.run_dir, resume=resume,
                                env_kwargs=env_kwargs or None)
            minutes = training_minutes(result.history)
        else:
            result = runs.train(name, config, args.env, runs_root=RESULTS / "runs", env_kwargs=env_kwargs or None)
            minutes = (time.perf_counter() - t) / 60
        final = result.final[0]
        rows.append({"learner": name, "return": final["return"], "cost": final["cost"],
                     "return_std": final["return_std"], "cost_std": final["cost_std"], "safe": final["safe"],
                     "policy": final["policy"], "deterministic_return": final["deterministic"]["return"],
                     "deterministic_cost": final["deterministic"]["cost"], "minutes": minutes,
                     "run_dir": str(result.run_dir.resolve().relative_to(RESULTS.parent.parent)),
                     "multipliers_last": _spread(result.history, args.last_iterations),
                     "load_1min_at_end": round(os.getloadavg()[0], 1),
                     "device": jax.devices()[0].device_kind})
        hist = [r for r in result.history if "episode/return" in r and r["seed"] == 0]
        curves[name] = (np.array([r["step"] for r in hist]), np.array([r["episode/return"] for r in hist]),
                        np.array([r["episode/cost"] for r in hist]))
        print(f"{name}: R {final['return']:.2f}  C {final['cost']:.2f}  ({minutes:.1f} min)", flush=True)

    bound = runs.get_learner(args.learners[0]).Config().safety_bound
    stem = RESULTS / f"learning_{args.env}{args.tag}"
    table = [f"# {args.env}: {args.total_steps:,} steps per learner (final evaluation: mean ± std over "
             "the evaluation episodes; safe is judged on the stochastic policy)", "",
             f"| learner | return R | cost C | safe (C < {bound:g}) | deterministic R / C | minutes |",
             "|---|---|---|---|---|---|"]
    table += [f"| {r['learner']} | {r['return']:.2f} ± {r['return_std']:.2f} | {r['cost']:.2f} ± {r['cost_std']:.2f} | "
              f"{'yes' if r['safe'] else 'no'} | {r['deterministic_return']:.2f} / {r['deterministic_cost']:.2f} | "
              f"{r['minutes']:.1f} |" for r in rows]
    curve_rows = {name: {"step": steps.tolist(), "return": ret.tolist(), "cost": cost.tolist()}
                  for name, (steps, ret, cost) in curves.items()}
    stem.with_suffix(".json").write_text(json.dumps({"args": dataclasses.asdict(args), "rows": rows,
                                                     "curves": curve_rows}, indent=2))

    plot(stem, args, bound)
    print("\n".join(table))


if __name__ == "__main__":
    cli = tyro.cli(Args)
    try:
        main(cli)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM, after the run checkpointed itself
        if not cli.run_dir:
            raise
        raise SystemExit(f"stopped; the same command resumes the run in {cli.run_dir}") from None
