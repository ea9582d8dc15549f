"""End-to-end training throughput: env steps per second of a learner (PPO-Lag by default) on PointGoal1, compile excluded.

Usage::

    python benchmarks/train_throughput.py                       # SPEC defaults (2048 envs, 5x256 critics)
    python benchmarks/train_throughput.py --num-envs 256 --batch-size 128 --critic-hidden 64 64
    python benchmarks/train_throughput.py --learner cpo         # another learner at the same batch
    python benchmarks/train_throughput.py --learner sac-lag     # the off-policy family at its own defaults

Fields left unset take the learner's own defaults. Besides the whole iteration it times its two
halves separately (the rollout: env steps plus actor inference; the update: the rest — for the PPO
family normalizer, critics on the batch, GAE and the SGD epochs; for the off-policy family the
buffer and its gradient steps), which shows the
knob that dominates on this machine. Results are appended to benchmarks/results/throughput.jsonl.

With several local devices the trainer spreads the env batch over them; on a CPU, split it into
two host devices (crax does by default, ``CRAX_HOST_DEVICES``) and pass ``--num-devices 2``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import time
from pathlib import Path

import jax
import tyro

import crax
from crax import runs
from crax.bench import host_cpu, time_calls
from crax.devices import xla_options
from crax.learners import make_trainer


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id."""
    learner: str = "ppo-lag"
    """Registered learner name (crax list)."""
    num_envs: int | None = None
    """Parallel envs (None: the learner's default; SPEC's 2048 for the PPO family)."""
    batch_size: int | None = None
    """Minibatch size: trajectory segments (PPO family, Brax convention) or transitions (off-policy)."""
    num_minibatches: int | None = None
    """Minibatches per epoch (PPO family)."""
    unroll_length: int | None = None
    """Segment length (PPO family) or steps per env per iteration (off-policy)."""
    num_epochs: int | None = None
    """SGD epochs (PPO family)."""
    updates_per_iteration: int | None = None
    """Gradient steps per iteration (off-policy)."""
    critic_hidden: tuple[int, ...] | None = None
    """Critic hidden sizes."""
    critic_chunk: int | None = None
    """PPO family: rows per chunk of the critics' gradient (None: the learner's default, 1024 on a CPU;
    the minibatch's rows: no chunking)."""
    learning_starts: int = 0
    """Off-policy: transitions before the first update (0 here, so the timed iterations update)."""
    iterations: int = 2
    """Timed iterations (after one warm-up call)."""
    num_devices: int = 0
    """Devices to shard over (0: the trainer's default, one device on a CPU)."""
    tag: str = ""
    """Groups rows measured together (e.g. one learner each, one sitting): docs tables ``throughput-<tag>``."""
    out: Path = Path(__file__).parent / "results" / "throughput.jsonl"
    """JSON-lines file the row is appended to."""


def main(args: Args) -> dict:
    env = crax.make(args.env)
    cls = runs.get_learner(args.learner)
    fields = {f.name for f in dataclasses.fields(cls.Config)}
    asked = dataclasses.asdict(args)
    knobs = {k: v for k, v in asked.items() if k in fields and v is not None}
    wrong = sorted(k for k in ("num_minibatches", "num_epochs", "updates_per_iteration")
                   if getattr(args, k) is not None and k not in fields)
    if wrong:
        raise SystemExit(f"{args.learner} has no {', '.join(wrong)}; its fields: {', '.join(sorted(fields))}")
    config = cls.Config(**knobs, num_evals=0)
    trainer = make_trainer(cls, config, env)
    state = trainer.init(jax.random.key(0))
    per_call = config.iterations_per_call  # as crax train calls it (the off-policy family runs 10 per call)
    steps = config.steps_per_iteration
    t = time.perf_counter()
    compile_s = trainer.compile(state, per_call)
    state, _ = trainer.run(state, per_call)  # warm-up: first call
    jax.block_until_ready(state)
    warm_s = time.perf_counter() - t

    t = time.perf_counter()
    for _ in range(args.iterations):
        state, metrics = trainer.run(state, per_call)
    jax.block_until_ready(metrics)
    iteration_s = (time.perf_counter() - t) / (args.iterations * per_call)

    rollout = xla_options.jit(trainer._rollout, static_argnums=4)  # compiled as the trainer compiles its programs
    length = getattr(config, "steps_per_env", config.unroll_length)  # the PPO family's rollout, or one iteration's
    rollout_s = time_calls(rollout, state.model, state.env, state.key, state.env_steps, length, repeats=1)
    row = {
        "env": args.env, "learner": args.learner, "device": jax.devices()[0].device_kind, "cpu": host_cpu(),
        "devices": len(jax.local_devices()), "sharding": None if trainer.sharding is None else "env batch",
        "load_1min": round(os.getloadavg()[0], 1), "date": datetime.date.today().isoformat(),
        **asked, **{k: getattr(config, k) for k in asked if k in fields}, "out": str(args.out),
        "env_steps_per_iteration": steps, "compile_s": round(compile_s, 1), "xla_options": xla_options.compiler_options(),
        "first_call_s": round(warm_s, 1), "iteration_s": round(iteration_s, 2),
        "train_steps_per_s": round(steps / iteration_s), "rollout_s": round(rollout_s, 2),
        "rollout_steps_per_s": round(steps / rollout_s), "update_s": round(iteration_s - rollout_s, 2),
    }
    if hasattr(config, "critic_chunk_rows"):
        row["critic_chunk_rows"] = config.critic_chunk_rows(config.steps_per_iteration // config.num_minibatches)
    if hasattr(config, "updates_per_iteration"):
        row["updates_per_s"] = round(config.updates_per_iteration / iteration_s, 1)
    print(json.dumps(row, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    main(tyro.cli(Args))
