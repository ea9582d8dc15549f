"""XLA CPU flags chosen by measurement: env steps/s and training steps/s with and without a flag set, one sitting.

Usage::

    python benchmarks/xla_flags.py                                   # the default flag sets, envs and batch sizes
    python benchmarks/xla_flags.py --envs PointGoal1 --num-envs 256 1024 --rounds 1 --no-train

XLA reads ``XLA_FLAGS`` once, when it starts its backends, so each (flag set, env) runs in its own
process. Processes of the different flag sets alternate (A B B A ... per round), so a load that
comes and goes on a shared machine falls on every set alike; the best of each set is kept. Every
child runs with crax's own start-up settings (``configure_jax``: host devices, compile cache) on top of
the flag set; crax adds no XLA CPU option of its own (docs/performance.md, "XLA options"). The bench half is ``crax bench``'s measurement
(``crax.bench.bench``, no C ceiling); the training half is ``train_throughput.py`` (PPO-Lag on
PointGoal1, one iteration timed after its compile). Rows go to ``benchmarks/results/xla_flags.jsonl``;
docs/performance.md's ``xla-flags`` table is generated from the latest sitting.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import tyro

RESULTS = Path(__file__).parent / "results" / "xla_flags.jsonl"
ROW_MARK = "xla_flags row: "
YNN_REDUCE_OFF = "--xla_cpu_experimental_ynn_fusion_type=-LIBRARY_FUSION_TYPE_REDUCE"


@dataclasses.dataclass(frozen=True)
class Args:
    flag_sets: tuple[str, ...] = ("", YNN_REDUCE_OFF)
    """XLA flag sets to compare ('' is XLA's defaults)."""
    envs: tuple[str, ...] = ("PointGoal1", "AntGoal1", "HumanoidVelocity1")
    """Env ids to bench."""
    num_envs: tuple[int, ...] = (64, 256, 1024, 2048)
    """Batch sizes: tests' small batches, the quick start's 256, bench's 1024, SPEC's 2048."""
    rounds: int = 2
    """Alternations of the flag sets (each round runs every set once per env, in alternating order)."""
    train: bool = True
    """Also time PPO-Lag's training iteration (train_throughput.py) under each flag set."""
    train_num_envs: tuple[int, ...] = (256, 2048)
    """Training batch sizes: the quick start's 256 (64x64 critics) and SPEC's 2048 (5x256 critics)."""
    child: str = ""
    """Internal: run one measurement in this process ('bench:<env>' or 'train:<num_envs>') and print JSON."""


def _bench_child(env_id: str, sizes: tuple[int, ...]) -> list[dict]:
    import crax
    from crax.bench import bench

    env = crax.make(env_id)
    out = []
    for n in sizes:
        row = bench(env, n, steps=max(10, 50_000 // n), repeats=2, ceiling=False)
        out.append({"env": env_id, "num_envs": n, "env_steps_per_s": round(row.env_steps_per_s),
                    "physics_steps_per_s": round(row.physics_steps_per_s)})
    return out


def _train_child(num_envs: int) -> list[dict]:
    """train_throughput.py at ``num_envs`` in its own process (under this child's XLA_FLAGS), its row read back."""
    small = num_envs <= 256
    hidden = ("64", "64") if small else ("256",) * 5
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t.jsonl"
        cmd = [sys.executable, str(Path(__file__).with_name("train_throughput.py")), "--num-envs", str(num_envs),
               "--batch-size", "128" if small else "1024", "--num-minibatches", "8" if small else "32",
               "--critic-hidden", *hidden, "--iterations", "2", "--out", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"train_throughput.py failed:\n{done.stderr[-3000:]}")
        row = json.loads(out.read_text().splitlines()[-1])
    return [{"env": f"train {row['env']} {row['learner']}", "num_envs": num_envs,
             "train_steps_per_s": row["train_steps_per_s"], "rollout_s": row["rollout_s"], "update_s": row["update_s"]}]


def _run_child(args: Args, flags: str, job: str) -> list[dict]:
    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()}
    cmd = [sys.executable, __file__, "--child", job, "--num-envs", *map(str, args.num_envs),
           "--train-num-envs", *map(str, args.train_num_envs)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child {job!r} with XLA_FLAGS={flags!r} failed:\n{done.stderr[-3000:]}")
    return [json.loads(line.removeprefix(ROW_MARK)) for line in done.stdout.splitlines() if line.startswith(ROW_MARK)]


def main(args: Args) -> None:
    if args.child:
        kind, _, what = args.child.partition(":")
        rows = _bench_child(what, args.num_envs) if kind == "bench" else _train_child(int(what))
        for r in rows:
            print(ROW_MARK + json.dumps(r))  # one line each: the child's own output (a benchmark's report) may hold JSON too
        return
    from crax.bench import host_cpu

    jobs = [f"bench:{e}" for e in args.envs] + ([f"train:{n}" for n in args.train_num_envs] if args.train else [])
    sitting = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    best: dict[tuple[str, str, int], dict] = {}
    loads: list[float] = []
    for r in range(args.rounds):
        for job in jobs:
            order = args.flag_sets if r % 2 == 0 else tuple(reversed(args.flag_sets))
            for flags in order:
                loads.append(os.getloadavg()[0])
                for row in _run_child(args, flags, job):
                    key = (flags, row["env"], row["num_envs"])
                    metric = "train_steps_per_s" if "train_steps_per_s" in row else "env_steps_per_s"
                    if key not in best or row[metric] > best[key][metric]:
                        best[key] = row
                    print(f"round {r + 1} {flags or '(XLA defaults)':<70} {row['env']:<28} N={row['num_envs']:<5} "
                          f"{row[metric]:>9,} /s  load {loads[-1]:.1f}", file=sys.stderr, flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with open(RESULTS, "a") as f:
        for (flags, _, _), row in best.items():
            f.write(json.dumps({**row, "xla_flags": flags, "cpu": host_cpu(), "cpu_count": os.cpu_count(),
                                "load_1min": [round(min(loads), 2), round(max(loads), 2)], "rounds": args.rounds,
                                "date": datetime.date.today().isoformat(), "sitting": sitting}) + "\n")


if __name__ == "__main__":
    main(tyro.cli(Args))
