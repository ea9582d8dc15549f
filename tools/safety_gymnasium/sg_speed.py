"""Safety-Gymnasium 1.0.0's own steps/s against crax's for the same ids, in one sitting.

Two halves, two Pythons (Safety-Gymnasium 1.0.0 imports only on Python 3.10; docs/safety_gymnasium.md
says how to make its environment)::

    python tools/safety_gymnasium/sg_speed.py --sg-python /path/to/py310/bin/python     # crax's venv; runs both halves

The Safety-Gymnasium half (``--measure-sg``, run by the first under ``--sg-python``) steps
``safety_gymnasium.make(id)`` with random actions for ``--sg-steps`` steps, resets included, on one
CPU core: Safety-Gymnasium steps one env per call. Its rate times the machine's cores is the
ceiling of running one Safety-Gymnasium process per core. The crax half is ``crax bench`` of the
same id at each ``--num-envs`` (one device, the C MuJoCo ceiling off), and with ``--sg-budget`` once more
at the largest N with Safety-Gymnasium's own solver budget (``solver_iterations=100, ls_iterations=50``:
docs/safety_gymnasium.md, "The solver budget"). One JSON line per id goes to
``benchmarks/results/sg_speed.jsonl`` with the sitting, the machine's load and both rates; the
table in docs/safety_gymnasium.md is generated from it (``python benchmarks/readme_tables.py``).

A Vision id (``SafetyPointGoal1Vision-v0``) is measured at one square image size, ``--vision-size N``
(default: the id's own, 256), on both sides: Safety-Gymnasium's ``vision_env_conf.vision_size`` (its
task config, passed through ``safety_gymnasium.make(id, config=...)``) and ``crax.make(id,
vision_size=N)``; each half asserts that its ``vision`` image is N×N×3, so both rates include
rendering an N×N image every step (Safety-Gymnasium's MuJoCo render, headless under ``MUJOCO_GL=egl``
and, on Mesa's llvmpipe, on one thread, ``LP_NUM_THREADS=1``, unless the environment sets them; crax's
ray-cast camera). Its JSON line adds ``vision_size`` and ``sg_renderer``, the GL renderer that drew
Safety-Gymnasium's images (llvmpipe: on the CPU). Vision steps are slower: ``--sg-steps 500
--crax-steps 2000 --num-envs 1 16 64`` keeps a 256×256 sitting short.

A multi-agent id (``SafetyMAHalfCheetah2x3Velocity-v0``, crax's name for ``make_ma("HalfCheetah", "2x3")``)
steps Safety-Gymnasium's ``make_ma`` env with every agent's random action on its side and ``crax bench`` of
``crax.tasks.multi_agent.make_ma_id`` on crax's: one step moves all agents on both.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "sg_speed.jsonl"
IDS = ("SafetyPointGoal1-v0", "SafetyPointButton1-v0", "SafetyAntVelocity-v1")


def is_vision(env_id: str) -> bool:
    """A Safety-Gymnasium Vision id (its observation has a ``vision`` image)."""
    return "Vision-" in env_id


MULTI_AGENT = re.compile(r"SafetyMA(?P<scenario>[A-Za-z]+?)(?P<conf>\d+x\d+d?)Velocity-v0")
"""crax's ids of Safety-Gymnasium's ``make_ma(scenario, agent_conf)`` tasks (crax.tasks.multi_agent.ma_ids)."""


def measure_sg_multi_agent(env_id: str, steps: int, seed: int = 0) -> dict:
    """Safety-Gymnasium's random-action steps/s of ``make_ma(scenario, agent_conf)`` (one step moves every
    agent), one env on one core, reset when an episode ends."""
    import warnings

    import numpy as np
    import safety_gymnasium

    match = MULTI_AGENT.fullmatch(env_id)
    assert match, env_id
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = safety_gymnasium.make_ma(match["scenario"], match["conf"])
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    spaces = {a: env.action_space(a) for a in env.possible_agents}
    resets = 0
    t = time.perf_counter()
    for _ in range(steps):
        actions = {a: rng.uniform(s.low, s.high).astype(np.float32) for a, s in spaces.items()}
        _, _, _, terminated, truncated, _ = env.step(actions)
        if any(terminated.values()) or (truncated if isinstance(truncated, bool) else any(truncated.values())):
            env.reset()
            resets += 1
    seconds = time.perf_counter() - t
    return {"id": env_id, "sg_steps_per_s": steps / seconds, "sg_steps": steps, "sg_resets": resets,
            "safety_gymnasium": safety_gymnasium.__version__, "agents": len(spaces)}


def measure_sg(env_id: str, steps: int, seed: int = 0, vision_size: int | None = None) -> dict:
    """Safety-Gymnasium's random-action steps/s on one env (Python 3.10 with safety-gymnasium); a
    Vision id renders its ``vision`` image at ``vision_size``×``vision_size`` (None: the id's own)."""
    import gymnasium
    import numpy as np
    import safety_gymnasium

    kwargs = {}
    if is_vision(env_id) and vision_size is not None:
        # make(config=...) replaces the registered config whole: keep it, add the image size
        config = {**gymnasium.spec(env_id).kwargs["config"], "vision_env_conf.vision_size": (vision_size, vision_size)}
        kwargs["config"] = config
    env = safety_gymnasium.make(env_id, **kwargs)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    extra = {}
    if is_vision(env_id):
        size = obs["vision"].shape[0]
        assert obs["vision"].shape == (size, size, 3) and size == (vision_size or size), obs["vision"].shape
        extra["vision_size"] = size
        from OpenGL import GL  # the render's GL context is current: say what drew it (llvmpipe: the CPU)

        extra["sg_renderer"] = GL.glGetString(GL.GL_RENDERER).decode()
    low, high = env.action_space.low, env.action_space.high
    resets = 0
    t = time.perf_counter()
    for _ in range(steps):
        obs, _, _, terminated, truncated, _ = env.step(rng.uniform(low, high))
        if terminated or truncated:
            env.reset()
            resets += 1
    seconds = time.perf_counter() - t
    if extra:
        assert obs["vision"].shape == (extra["vision_size"],) * 2 + (3,), obs["vision"].shape
    return {"id": env_id, "sg_steps_per_s": steps / seconds, "sg_steps": steps, "sg_resets": resets,
            "safety_gymnasium": safety_gymnasium.__version__, **extra}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", default=list(IDS))
    parser.add_argument("--sg-python", help="Python 3.10 with safety-gymnasium==1.0.0 (runs the Safety-Gymnasium half)")
    parser.add_argument("--sg-steps", type=int, default=5000)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 1024])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--crax-steps", type=int, default=20_000, help="env steps per timed crax call (all envs)")
    parser.add_argument("--sg-budget", action="store_true",
                        help="also bench crax at Safety-Gymnasium's solver budget (100/50) at the largest N")
    parser.add_argument("--vision-size", type=int,
                        help="square image size of the Vision ids on both sides (default: the id's own, 256)")
    parser.add_argument("--measure-sg", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_sg:
        for env_id in args.ids:
            row = (measure_sg_multi_agent(env_id, args.sg_steps) if MULTI_AGENT.fullmatch(env_id)
                   else measure_sg(env_id, args.sg_steps, vision_size=args.vision_size))
            print(json.dumps(row), flush=True)
        return
    if not args.sg_python:
        parser.error("--sg-python is required: a Python 3.10 with safety-gymnasium==1.0.0")

    import crax
    from crax.bench import bench, host_cpu
    from crax.core import observation
    from crax.tasks.multi_agent import make_ma_id

    sitting = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    load_before = os.getloadavg()[0]
    size_args = ["--vision-size", str(args.vision_size)] if args.vision_size is not None else []
    proc = subprocess.run([args.sg_python, __file__, "--measure-sg", "--sg-steps", str(args.sg_steps), "--ids", *args.ids,
                           *size_args], capture_output=True, text=True, check=False,
                          env={"MUJOCO_GL": "egl", "LP_NUM_THREADS": "1", **os.environ})
    if proc.returncode:
        sys.exit(f"the Safety-Gymnasium half failed ({args.sg_python}):\n{proc.stderr[-2000:]}")
    sg = {r["id"]: r for r in (json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{"))}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    for env_id in args.ids:
        # a Vision id at the size Safety-Gymnasium's half rendered (and asserted)
        kwargs = {"vision_size": sg[env_id]["vision_size"]} if "vision_size" in sg[env_id] else {}
        env = make_ma_id(env_id) if MULTI_AGENT.fullmatch(env_id) else crax.make(env_id, **kwargs)
        if kwargs:
            shape = observation.images(env.observation_spec)["vision"].shape
            assert tuple(shape[-3:]) == (kwargs["vision_size"],) * 2 + (3,), shape
        crax_rates, physics_rates = {}, {}
        for n in args.num_envs:
            row = bench(env, n, steps=max(10, args.crax_steps // n), repeats=args.repeats, ceiling=False)
            crax_rates[str(n)] = round(row.env_steps_per_s)
            physics_rates[str(n)] = round(row.physics_steps_per_s)
        own = [int(env.mj_model.opt.iterations), int(env.mj_model.opt.ls_iterations)]
        extra = {"crax_budget": own}
        if args.sg_budget and own != [100, 50]:
            n = max(args.num_envs)
            row = bench(crax.make(env_id, solver_iterations=100, ls_iterations=50, **kwargs), n,
                        steps=max(10, args.crax_steps // n), repeats=args.repeats, ceiling=False)
            extra["crax_sg_budget_steps_per_s"] = {str(n): round(row.env_steps_per_s)}
        record = {**{k: (round(v) if k == "sg_steps_per_s" else v) for k, v in sg[env_id].items()},
                  "crax_steps_per_s": crax_rates, "crax_physics_steps_per_s": physics_rates, **extra,
                  "cpu_count": os.cpu_count(), "machine": platform.machine(),
                  "cpu": host_cpu(),
                  "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                  "date": datetime.date.today().isoformat(), "sitting": sitting}
        with open(RESULTS, "a") as f:
            f.write(json.dumps(record) + "\n")
        name = env_id + (f" ({kwargs['vision_size']}x{kwargs['vision_size']})" if kwargs else "")
        print(f"{name:<24} Safety-Gymnasium {record['sg_steps_per_s']:>7,} /s (1 env)   crax "
              + "  ".join(f"N={n}: {v:,} /s" for n, v in crax_rates.items()), flush=True)


if __name__ == "__main__":
    main()
