"""Learning benchmark: PPO and every safe learner for the same steps on one env (default HalfCheetahVelocity1).

Usage::

    python benchmarks/learning.py                                  # all built-in learners, 2e6 steps each
    python benchmarks/learning.py --learners ppo ppo-lag --total-steps 500000

Each learner trains with the SPEC defaults except the knobs below (smaller batches so that a run
fits in about 20 minutes on a 2-core CPU). Writes the final episodic return and cost of each
learner to ``benchmarks/results/learning_<env>.md`` (and ``.json``) and their training curves to
``benchmarks/results/learning_<env>.png``. Run folders go under ``benchmarks/results/runs/``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import tyro  # noqa: E402

from crax import runner  # noqa: E402

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


def main(args: Args) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    rows, curves = [], {}
    for name in args.learners:
        cls = runner.get_learner(name)
        config = cls.Config(total_steps=args.total_steps, num_envs=args.num_envs, batch_size=args.batch_size,
                            num_minibatches=args.num_minibatches, unroll_length=args.unroll_length,
                            critic_hidden=args.critic_hidden, num_evals=args.num_evals, seed=args.seed)
        t = time.perf_counter()
        result = runner.train(name, config, args.env, runs_root=RESULTS / "runs")
        minutes = (time.perf_counter() - t) / 60
        final = result.final[0]
        rows.append({"learner": name, "return": final["return"], "cost": final["cost"], "safe": final["safe"],
                     "minutes": minutes, "run_dir": str(result.run_dir)})
        hist = [r for r in result.history if "episode/return" in r and r["seed"] == 0]
        curves[name] = (np.array([r["step"] for r in hist]), np.array([r["episode/return"] for r in hist]),
                        np.array([r["episode/cost"] for r in hist]))
        print(f"{name}: R {final['return']:.2f}  C {final['cost']:.2f}  ({minutes:.1f} min)", flush=True)

    bound = runner.get_learner(args.learners[0]).Config().safety_bound
    stem = RESULTS / f"learning_{args.env}"
    table = [f"# {args.env}: {args.total_steps:,} steps per learner (final deterministic evaluation)", "",
             f"| learner | return R | cost C | safe (C < {bound:g}) | minutes |", "|---|---|---|---|---|"]
    table += [f"| {r['learner']} | {r['return']:.2f} | {r['cost']:.2f} | {'yes' if r['safe'] else 'no'} | "
              f"{r['minutes']:.1f} |" for r in rows]
    stem.with_suffix(".md").write_text("\n".join(table) + "\n")
    stem.with_suffix(".json").write_text(json.dumps({"args": dataclasses.asdict(args), "rows": rows}, indent=2))

    fig, (ax_r, ax_c) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, (steps, ret, cost) in curves.items():
        ax_r.plot(steps, ret, label=name)
        ax_c.plot(steps, cost, label=name)
    ax_c.axhline(bound, color="k", linestyle="--", linewidth=1, label=f"bound d={bound:g}")
    ax_r.set(title=f"{args.env}: episodic return", xlabel="env steps")
    ax_c.set(title="episodic cost", xlabel="env steps")
    ax_c.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(stem.with_suffix(".png"), dpi=120)
    print("\n".join(table))


if __name__ == "__main__":
    main(tyro.cli(Args))
