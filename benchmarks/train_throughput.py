"""End-to-end training throughput: env steps per second of a learner (PPO-Lag) on PointGoal1, compile excluded.

Usage::

    python benchmarks/train_throughput.py                       # SPEC defaults (2048 envs, 5x256 critics)
    python benchmarks/train_throughput.py --num-envs 256 --batch-size 128 --critic-hidden 64 64
    python benchmarks/train_throughput.py --learner cpo         # another learner at the same batch

Besides the whole iteration it times its two halves separately (the rollout: env steps plus actor
inference; the update: normalizer, critics on the batch, GAE and the SGD epochs), which shows the
knob that dominates on this machine. Results are appended to benchmarks/results/throughput.jsonl.

With several local devices the trainer spreads the env batch over them; on a CPU, split it into
two host devices (crax does by default, ``CRAX_HOST_DEVICES``) and pass ``--num-devices 2``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import time
from pathlib import Path

import jax
import tyro

import crax
from crax import runs
from crax.learners import make_trainer


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id."""
    learner: str = "ppo-lag"
    """Registered learner name (crax list)."""
    num_envs: int = 2048
    """Parallel envs."""
    batch_size: int = 1024
    """Trajectory segments per minibatch (Brax convention)."""
    num_minibatches: int = 32
    """Minibatches per epoch."""
    unroll_length: int = 8
    """Segment length."""
    num_epochs: int = 6
    """SGD epochs."""
    critic_hidden: tuple[int, ...] = (256, 256, 256, 256, 256)
    """Critic hidden sizes."""
    iterations: int = 2
    """Timed iterations (after one warm-up call)."""
    num_devices: int = 0
    """Devices to shard over (0: the trainer's default, one device on a CPU)."""
    tag: str = ""
    """Groups rows measured together (e.g. one learner each, one sitting): docs tables ``throughput-<tag>``."""


def _time(fn, *args, repeats: int) -> float:
    out = fn(*args)
    jax.block_until_ready(out)
    t = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t) / repeats


def main(args: Args) -> dict:
    env = crax.make(args.env)
    cls = runs.get_learner(args.learner)
    config = cls.Config(num_envs=args.num_envs, batch_size=args.batch_size, num_minibatches=args.num_minibatches,
                        unroll_length=args.unroll_length, num_epochs=args.num_epochs,
                        critic_hidden=args.critic_hidden, num_evals=0, num_devices=args.num_devices)
    trainer = make_trainer(cls, config, env)
    state = trainer.init(jax.random.key(0))
    steps = config.steps_per_iteration
    t = time.perf_counter()
    compile_s = trainer.compile(state, 1)
    state, _ = trainer.run(state, 1)  # warm-up: first call
    jax.block_until_ready(state)
    warm_s = time.perf_counter() - t

    t = time.perf_counter()
    for _ in range(args.iterations):
        state, metrics = trainer.run(state, 1)
    jax.block_until_ready(metrics)
    iteration_s = (time.perf_counter() - t) / args.iterations

    rollout = jax.jit(trainer._rollout, static_argnums=4)
    rollout_s = _time(rollout, state.model, state.env, state.key, state.env_steps, config.steps_per_env, repeats=1)
    row = {
        "env": args.env, "learner": args.learner, "device": jax.devices()[0].device_kind, "cpu": platform.processor(),
        "devices": len(jax.local_devices()), "sharding": None if trainer.sharding is None else "env batch",
        "load_1min": round(os.getloadavg()[0], 1), "date": datetime.date.today().isoformat(),
        **dataclasses.asdict(args), "env_steps_per_iteration": steps, "compile_s": round(compile_s, 1),
        "first_call_s": round(warm_s, 1), "iteration_s": round(iteration_s, 2),
        "train_steps_per_s": round(steps / iteration_s), "rollout_s": round(rollout_s, 2),
        "rollout_steps_per_s": round(steps / rollout_s), "update_s": round(iteration_s - rollout_s, 2),
    }
    print(json.dumps(row, indent=2))
    out = Path(__file__).parent / "results" / "throughput.jsonl"
    out.parent.mkdir(exist_ok=True)
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    main(tyro.cli(Args))
