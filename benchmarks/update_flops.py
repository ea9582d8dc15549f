"""The PPO family's training update against the machine's matmul peak, one process, one sitting.

Usage::

    python benchmarks/update_flops.py                  # PPO-Lag on PointGoal1 at SPEC's defaults
    python benchmarks/update_flops.py --learner ppo --env AntGoal1

The update phase of an iteration is ``num_epochs × num_minibatches`` identical optimizer steps
(the actor and both critics on one minibatch, ``ConstrainedPPO.minibatch_epochs``), plus one
forward pass of the critics over the rollout for GAE. This times one such optimizer step, compiled
alone, and takes its floating-point operations from XLA's own cost analysis of that program; their
ratio is the step's achieved FLOP/s. The peak it is compared with is a plain f32 matmul
(``jnp.dot`` of two ``n × n`` matrices, 2n³ operations) timed in the same process, and a matmul of
the update's own widest shape (minibatch × hidden by hidden × hidden). Peaks and the step are timed
alternately, best of ``repeats`` each, so a load that comes and goes falls on all of them alike.
Rows go to ``benchmarks/results/update_flops.jsonl``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import tyro
from flax import nnx

import crax
from crax import runs
from crax.bench import host_cpu
from crax.learners import make_trainer

RESULTS = Path(__file__).parent / "results" / "update_flops.jsonl"


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id (sets the observation and action sizes)."""
    learner: str = "ppo-lag"
    """A PPO-family learner (its ppo_loss is the step timed)."""
    matmul_n: int = 2048
    """Side of the square matmul that measures the peak."""
    repeats: int = 5
    """Timed calls of each program; the best is kept."""
    calls: int = 10
    """Back-to-back calls per timing."""


def _best(fn, *args, repeats: int, calls: int) -> float:
    """Best seconds per call of ``fn(*args)`` over ``repeats`` timings of ``calls`` calls."""
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def _flops(compiled) -> float:
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list | tuple) else analysis
    return float(analysis["flops"])


def minibatch(trainer, size: int, key: jax.Array) -> dict[str, jax.Array]:
    """A minibatch shaped as the trainer's update sees it (values random; the cost is in the shapes)."""
    k = iter(jax.random.split(key, 8))
    terms = (len(trainer.cost_terms),) if trainer.cost_terms else ()
    o, a = trainer.observation_size, trainer.action_size
    normal = lambda shape: jax.random.normal(next(k), shape)  # noqa: E731
    return {"obs": normal((size, o)), "u": normal((size, a)), "logp": normal((size,)), "loc": normal((size, a)),
            "scale": jnp.ones((size, a)), "adv_r": normal((size,)), "adv_c": normal((size, *terms)),
            "target_r": normal((size,)), "target_c": normal((size, *terms))}


def main(args: Args) -> dict:
    env = crax.make(args.env)
    cls = runs.get_learner(args.learner)
    if not hasattr(cls, "ppo_loss"):
        raise SystemExit(f"{args.learner} is not of the PPO family (no ppo_loss); pick one of crax list's PPO learners")
    config = cls.Config(num_evals=0)
    trainer = make_trainer(cls, config, env)
    state = trainer.init(jax.random.key(0))
    learner, opt = nnx.merge(trainer.graphdef, jax.tree.map(lambda x: x[0], state.model))
    graphdef, model = nnx.split((learner, opt))
    size = config.steps_per_iteration // config.num_minibatches
    mb = minibatch(trainer, size, jax.random.key(1))
    violation = jnp.zeros(())

    def sgd_step(model, mb):  # as ConstrainedPPO.minibatch_epochs steps, on ppo_loss
        target, opt = nnx.merge(graphdef, model)
        (_, metrics), grads = nnx.value_and_grad(lambda m, b: m.ppo_loss(b, violation), has_aux=True)(target, mb)
        opt.update(target, grads)
        return nnx.state((target, opt)), metrics

    step = jax.jit(sgd_step).lower(model, mb).compile()
    step_flops = _flops(step)

    n = args.matmul_n
    a, b = jax.random.normal(jax.random.key(2), (n, n)), jax.random.normal(jax.random.key(3), (n, n))
    square = jax.jit(jnp.dot).lower(a, b).compile()
    width = max(config.critic_hidden)
    x, w = jax.random.normal(jax.random.key(4), (size, width)), jax.random.normal(jax.random.key(5), (width, width))
    shaped = jax.jit(jnp.dot).lower(x, w).compile()

    times = {"step": [], "square": [], "shaped": []}
    for _ in range(args.repeats):  # alternate, so load falls on all three
        times["step"].append(_best(step, model, mb, repeats=1, calls=args.calls))
        times["square"].append(_best(square, a, b, repeats=1, calls=args.calls))
        times["shaped"].append(_best(shaped, x, w, repeats=1, calls=args.calls))
    step_s, square_s, shaped_s = (min(times[k]) for k in ("step", "square", "shaped"))
    row = {
        "env": args.env, "learner": args.learner, "minibatch": size, "critic_hidden": list(config.critic_hidden),
        "actor_hidden": list(getattr(config, "actor_hidden", ())), "step_gflop": round(step_flops / 1e9, 3),
        "step_ms": round(step_s * 1e3, 2), "step_gflops_per_s": round(step_flops / step_s / 1e9, 1),
        "matmul_n": n, "peak_gflops_per_s": round(2 * n**3 / square_s / 1e9, 1),
        "shaped_matmul": [size, width, width], "shaped_gflops_per_s": round(2 * size * width**2 / shaped_s / 1e9, 1),
        "update_steps_per_iteration": config.num_epochs * config.num_minibatches,
        "devices": f"{len(jax.devices())} {jax.devices()[0].platform}", "cpu": host_cpu(), "cpu_count": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2), "date": datetime.date.today().isoformat(),
    }
    row["fraction_of_peak"] = round(row["step_gflops_per_s"] / row["peak_gflops_per_s"], 3)
    print(json.dumps(row, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    main(tyro.cli(Args))
