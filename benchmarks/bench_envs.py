"""Env throughput against bare physics for many env ids (``crax bench`` for each), into one results file.

Usage::

    python benchmarks/bench_envs.py --envs AntVelocity1 AntGoal1 --num-envs 64 256 1024
    python benchmarks/bench_envs.py --suite Velocity          # level 1 of every body in the suite
    python benchmarks/bench_envs.py --envs PointCircle1 --num-envs 4096 --physics jax warp   # both MJX implementations
    python benchmarks/readme_tables.py                        # regenerate the tables of README.md and docs/

Appends one JSON line per (env id, physics, N) to ``benchmarks/results/bench_envs.jsonl`` with the machine,
its load average when the row was taken, the date and the ``sitting`` (when this invocation
started: rows of one sitting are comparable with each other); the bench table of docs/performance.md is generated from
the latest row of each (env, N), and the navigation table compares envs within one sitting. Each timed call runs about ``--env-steps`` env steps (``N × steps``), so heavy
bodies keep short timings; the best of ``--repeats`` calls is reported for the env and for the bare
physics (``mjx.step`` × frame skip on the same model and batch), measured back to back, and for the
C MuJoCo ceiling (``mujoco.rollout`` of the same model from the same states, one thread per core:
``ceiling_steps_per_s`` in env steps/s, ``ceiling_ratio`` = crax / C MuJoCo, ``ceiling_threads``);
``--no-ceiling`` skips it. With ``--physics jax warp`` each env is measured on both of MJX's
implementations (``crax.make(id, physics=...)``) and each row records its ``physics``; the tables of
the JAX implementation read the ``jax`` rows, the ``warp-<N>`` tables set the two side by side. A row
of an RK4 model records ``rk4_stages`` (``$CRAX_RK4_STAGES``: how its step was compiled).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import sys
from pathlib import Path

import tyro

import crax
from crax.bench import Physics, bench, row_record
from crax.bench_ceiling import unavailable
from crax.devices import startup

RESULTS = Path(__file__).parent / "results" / "bench_envs.jsonl"


@dataclasses.dataclass(frozen=True)
class Args:
    envs: tuple[str, ...] = ()
    """Env ids to measure."""
    suite: str | None = None
    """Also measure level 1 (Velocity) or levels 1-3 (other suites) of every body that runs this suite."""
    num_envs: tuple[int, ...] = (64, 256, 1024)
    """Numbers of parallel envs."""
    env_steps: int = 40_000
    """Env steps per timed call (steps per env = env_steps // N, at least 10)."""
    repeats: int = 2
    """Timed calls per measurement; the best is kept."""
    velocity_threshold: float | None = None
    """Passed to envs whose body has no measured τ yet (irrelevant to throughput)."""
    out: Path = RESULTS
    """Results file to append to (e.g. ``benchmarks/results/bench_envs_gpu.jsonl`` for rows taken on a GPU)."""
    ceiling: bool = True
    """Measure the C MuJoCo ceiling beside each row (``--no-ceiling`` skips it)."""
    physics: tuple[Physics, ...] = ("jax",)
    """MJX implementations to measure each env on (``warp``: ``pip install -e '.[warp]'``)."""


def ids_for_suite(suite: str) -> list[str]:
    levels = (1,) if suite == "Velocity" else (1, 2, 3)  # Velocity levels differ only in τ: one program
    out = []
    for env_id in crax.env_ids():
        _, s, level = crax.parse_id(env_id)
        if s.name == suite and level in levels:
            out.append(env_id)
    return out


def main(args: Args) -> None:
    startup.configure_jax()  # as `crax bench` does: one host device per core, before JAX starts its backends
    ids = list(args.envs) + (ids_for_suite(args.suite) if args.suite else [])
    if not ids:
        raise SystemExit("nothing to measure: give --envs or --suite")
    ceiling = args.ceiling
    if ceiling and (why := unavailable()):
        print(f"no C MuJoCo ceiling: {why}; rows go without it", file=sys.stderr)
        ceiling = False
    sitting = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for env_id in ids:
        for impl in args.physics:
            env = _make(env_id, impl, args.velocity_threshold)
            for n in args.num_envs:
                load = os.getloadavg()[0]
                row = bench(env, n, steps=max(10, args.env_steps // n), repeats=args.repeats, ceiling=ceiling)
                record = row_record(env_id, env, row, load=load, sitting=sitting, physics=impl)
                with open(args.out, "a") as f:
                    f.write(json.dumps(record) + "\n")
                c_note = (f"  C MuJoCo {record['ceiling_steps_per_s']:>9,} /s  crax/C {record['ceiling_ratio']:.2f}x"
                          if "ceiling_ratio" in record else "")
                print(f"{env_id:<24} {impl:<4} N={n:<5} env {record['env_steps_per_s']:>9,} /s  physics "
                      f"{record['physics_steps_per_s']:>9,} /s  ratio {record['ratio']:.2f}x{c_note}  load {load:.1f}",
                      file=sys.stderr, flush=True)


def _make(env_id: str, physics: str, velocity_threshold: float | None):
    try:
        return crax.make(env_id, physics=physics)
    except ValueError:
        if velocity_threshold is None:
            raise
        return crax.make(env_id, physics=physics, velocity_threshold=velocity_threshold)


if __name__ == "__main__":
    main(tyro.cli(Args))
