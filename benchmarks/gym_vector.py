"""Steps/s of the Gymnasium vector env against crax's native jitted rollout of the same batch.

Usage::

    python benchmarks/gym_vector.py --env PointGoal1 --num-envs 1024 --steps 200

Both sides run the same stack, ``AutoReset(Vmap(env, N))`` with random actions on the default
device. The Gymnasium side is the Python loop a Gymnasium user writes: uniform numpy actions,
``envs.step`` (one jitted step, actions to the device, results back to numpy). The native side is
one jitted ``lax.scan`` over ``--steps`` steps with actions drawn by ``jax.random``. Each side is
timed ``--repeats`` times, alternating, after a warm-up, and the fastest is kept. Appends one JSON
row to ``benchmarks/results/gym_vector.jsonl``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

import jax
import numpy as np
import tyro

import crax
import crax.gymnasium
from crax.bench import check_counts, host_cpu
from crax.core.env import AutoReset, Vmap

RESULTS = Path(__file__).parent / "results" / "gym_vector.jsonl"


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id."""
    num_envs: int = 1024
    """Parallel envs."""
    steps: int = 200
    """Steps per timed run (each of num_envs envs)."""
    repeats: int = 3
    """Timed runs per side; the fastest is kept."""


def gym_seconds(envs: crax.gymnasium.CraxVectorEnv, steps: int, rng: np.random.Generator) -> float:
    t = time.perf_counter()
    for _ in range(steps):
        envs.step(rng.uniform(-1.0, 1.0, envs.action_space.shape).astype(np.float32))
    return time.perf_counter() - t


def main(args: Args) -> None:
    check_counts(prefix="--", num_envs=args.num_envs, steps=args.steps, repeats=args.repeats)
    env = crax.make(args.env)
    envs = crax.gymnasium.CraxVectorEnv(env, args.num_envs, autoreset_mode="SameStep")  # the native stack
    native = AutoReset(Vmap(env, args.num_envs))

    def rollout(state, key):
        def body(s, k):
            a = jax.random.uniform(k, (args.num_envs, env.action_size), minval=-1.0, maxval=1.0)
            return native.step(s, a), None

        return jax.lax.scan(body, state, jax.random.split(key, args.steps))[0]

    key = jax.random.key(0)
    state = jax.jit(native.reset)(key)
    t = time.perf_counter()
    rollout_c = jax.jit(rollout).lower(state, key).compile()
    native_compile_s = time.perf_counter() - t
    t = time.perf_counter()
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    gym_seconds(envs, 2, rng)  # compiles the step
    gym_compile_s = time.perf_counter() - t
    jax.block_until_ready(rollout_c(state, key))  # warm-up

    load = os.getloadavg()[0]
    gym_s = native_s = float("inf")
    for i in range(args.repeats):
        gym_s = min(gym_s, gym_seconds(envs, args.steps, rng))
        t = time.perf_counter()
        jax.block_until_ready(rollout_c(state, jax.random.fold_in(key, i)))
        native_s = min(native_s, time.perf_counter() - t)

    n = args.num_envs * args.steps
    device = jax.devices()[0]
    record = {
        "env": args.env, "num_envs": args.num_envs, "steps": args.steps,
        "gym_steps_per_s": round(n / gym_s), "native_steps_per_s": round(n / native_s),
        "ratio": round(native_s / gym_s, 3),  # gym rate / native rate
        "gym_compile_s": round(gym_compile_s, 1), "native_compile_s": round(native_compile_s, 1),
        "device": device.platform, "cpu_count": os.cpu_count(), "machine": platform.machine(), "cpu": host_cpu(),
        "load_1min": round(load, 2), "date": datetime.date.today().isoformat(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(f"{args.env} N={args.num_envs}: gymnasium {record['gym_steps_per_s']:,} steps/s, native "
          f"{record['native_steps_per_s']:,} steps/s, gymnasium/native {record['ratio']:.2f} "
          f"(load {record['load_1min']})", file=sys.stderr)


if __name__ == "__main__":
    main(tyro.cli(Args))
