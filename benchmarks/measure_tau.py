"""Measures a body's base velocity threshold τ (SPEC §3 Velocity): 50% of the speed an
unconstrained PPO policy reaches on the body's Velocity task.

Usage::

    python benchmarks/measure_tau.py --body Point --total-steps 2000000
    python benchmarks/measure_tau.py --body Spider --total-steps 3000000

PPO ignores the cost, so the env is built with ``cost_mode="hinge"`` and ``velocity_threshold=0``:
its per-step cost is then exactly the speed the Velocity suite constrains (planar speed of the
torso), and the final evaluation's episodic cost divided by the episode length is the policy's
mean speed. Writes ``benchmarks/results/tau_<Body>.json`` with the budget, the speed and τ.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import tyro

from crax import runs

RESULTS = Path(__file__).parent / "results"


@dataclasses.dataclass(frozen=True)
class Args:
    body: str = "Point"
    """Body name; the task is ``<body>Velocity1``."""
    total_steps: int = 2_000_000
    """Environment steps of the PPO run."""
    num_envs: int = 256
    """Parallel envs."""
    batch_size: int = 128
    """Trajectory segments per minibatch."""
    num_minibatches: int = 16
    """Minibatches per epoch."""
    critic_hidden: tuple[int, ...] = (256, 256, 256, 256, 256)
    """Critic hidden sizes."""
    eval_episodes: int = 128
    """Evaluation episodes of the final policy."""
    seed: int = 0


def main(args: Args) -> None:
    env_id = f"{args.body}Velocity1"
    env_kwargs = {"velocity_threshold": 0.0, "cost_mode": "hinge"}
    cls = runs.get_learner("ppo")
    config = cls.Config(total_steps=args.total_steps, num_envs=args.num_envs, batch_size=args.batch_size,
                        num_minibatches=args.num_minibatches, critic_hidden=args.critic_hidden, seed=args.seed)
    t = time.perf_counter()
    result = runs.train("ppo", config, env_id, env_kwargs=env_kwargs, runs_root=RESULTS / "runs")
    minutes = (time.perf_counter() - t) / 60
    ev = runs.evaluate(result.run_dir, episodes=args.eval_episodes, seed=args.seed + 1)
    speed = ev["cost"] / ev["length"]
    out = {
        "body": args.body, "env": env_id, "learner": "ppo", "total_steps": args.total_steps,
        "config": {k: v for k, v in dataclasses.asdict(args).items() if k != "body"},
        "minutes": round(minutes, 1), "eval_episodes": args.eval_episodes,
        "eval_return": ev["return"], "eval_length": ev["length"],
        "mean_speed": speed, "tau": 0.5 * speed, "run_dir": str(Path(result.run_dir).relative_to(Path.cwd()))
        if Path(result.run_dir).is_relative_to(Path.cwd()) else str(result.run_dir),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"tau_{args.body}.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(tyro.cli(Args))
