"""The PPO family's training update against the machine's matmul peak, one process, one sitting.

Usage::

    python benchmarks/update_flops.py                  # PPO-Lag on PointGoal1 at SPEC's defaults
    python benchmarks/update_flops.py --learner ppo --env AntGoal1

The update phase of an iteration is ``num_epochs × num_minibatches`` identical optimizer steps
(the actor and both critics on one minibatch, ``ConstrainedPPO.minibatch_epochs``), plus one
forward pass of the critics over the rollout for GAE. This times the trainer's own update on one
iteration's batch with ``num_epochs`` 1 (a shuffle and ``num_minibatches`` steps in its
``lax.scan``, compiled as training compiles it) and divides by the steps. A step's floating-point
operations come from XLA's own cost analysis of one step compiled alone with the critics' gradient
over the whole minibatch (the same arithmetic as the chunked step, whose ``lax.scan`` the analysis
would count once, not once a chunk); their ratio is the achieved FLOP/s. The peak it is compared
with is a plain f32 matmul (``jnp.dot`` of two ``n × n`` matrices, 2n³ operations) timed in the same
process, and a matmul of the update's own widest shape (minibatch × hidden by hidden × hidden).

The update is timed as the learner runs it (the critics' gradient in chunks of ``critic_chunk``
rows: 1,024 on a CPU) and with the whole minibatch at once. A step compiled and called alone is not
the measure: each call then gets fresh memory for its ~200 MB of activations and spends a third of
its time in page faults (docs/performance.md), which the update's loop does not pay. The updates and
the peaks are timed alternately, best of ``repeats`` each, so a load that comes and goes falls on
all of them alike. Rows go to ``benchmarks/results/update_flops.jsonl``.
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
from crax.devices import xla_options
from crax.learners import make_trainer
from crax.learners.on_policy.family import IterationBatch

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
    """Back-to-back calls per timing of a matmul (an update, ~7 s at SPEC, is timed one call at a time)."""


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


def _step_flops(trainer, model, size: int) -> float:
    """XLA's count of one optimizer step's floating-point operations (``ppo_loss``, its gradient, Adam)
    on a minibatch of ``size`` for the trainer's ``model`` (seed axis first), the critics' gradient
    over the whole minibatch."""
    learner, opt = nnx.merge(trainer.graphdef, jax.tree.map(lambda x: x[0], model))
    graphdef, model = nnx.split((learner, opt))
    violation = jnp.zeros(())

    def sgd_step(model, mb):  # as ConstrainedPPO.minibatch_epochs steps
        target, opt = nnx.merge(graphdef, model)
        (_, metrics), grads = nnx.value_and_grad(lambda m, b: m.ppo_loss(b, violation), has_aux=True)(target, mb)
        opt.update(target, grads)
        return nnx.state((target, opt)), metrics

    return _flops(jax.jit(sgd_step).lower(model, minibatch(trainer, size, jax.random.key(1))).compile())


def _compiled_update(trainer):
    """The trainer's update (one seed, vmapped as training runs it) on a random iteration batch, compiled,
    with its arguments."""
    config = trainer.config
    state = trainer.init(jax.random.key(0))
    samples = minibatch(trainer, config.steps_per_iteration, jax.random.key(1))
    batch = IterationBatch(samples=jax.tree.map(lambda x: x[None], samples), violation=jnp.zeros((1,)),
                           cost_scale=jnp.ones((1,)))
    keys = jax.random.split(jax.random.key(2), 1)
    args = (state.model, batch, keys)
    return xla_options.jit(jax.vmap(trainer._update)).lower(*args).compile(), args  # as the trainer compiles it


def main(args: Args) -> dict:
    env = crax.make(args.env)
    cls = runs.get_learner(args.learner)
    if not hasattr(cls, "ppo_loss"):
        raise SystemExit(f"{args.learner} is not of the PPO family (no ppo_loss); pick one of crax list's PPO learners")
    config = cls.Config(num_evals=0, num_epochs=1)
    size = config.steps_per_iteration // config.num_minibatches
    chunk = config.critic_chunk_rows(size)
    update, update_args = _compiled_update(make_trainer(cls, config, env))
    whole_trainer = make_trainer(cls, dataclasses.replace(config, critic_chunk=size), env)
    whole, whole_args = _compiled_update(whole_trainer)
    step_flops = _step_flops(whole_trainer, whole_args[0], size)  # whole_args: (model, batch, keys)
    steps = config.num_minibatches

    n = args.matmul_n
    a, b = jax.random.normal(jax.random.key(2), (n, n)), jax.random.normal(jax.random.key(3), (n, n))
    square = jax.jit(jnp.dot).lower(a, b).compile()
    width = max(config.critic_hidden)
    x, w = jax.random.normal(jax.random.key(4), (size, width)), jax.random.normal(jax.random.key(5), (width, width))
    shaped = jax.jit(jnp.dot).lower(x, w).compile()

    times = {"step": [], "whole": [], "square": [], "shaped": []}
    for _ in range(args.repeats):  # alternate, so load falls on all four
        times["step"].append(_best(update, *update_args, repeats=1, calls=1) / steps)
        times["whole"].append(_best(whole, *whole_args, repeats=1, calls=1) / steps)
        times["square"].append(_best(square, a, b, repeats=1, calls=args.calls))
        times["shaped"].append(_best(shaped, x, w, repeats=1, calls=args.calls))
    step_s, whole_s, square_s, shaped_s = (min(times[k]) for k in ("step", "whole", "square", "shaped"))
    row = {
        "env": args.env, "learner": args.learner, "minibatch": size, "critic_chunk": chunk, "critic_hidden": list(config.critic_hidden),
        "actor_hidden": list(getattr(config, "actor_hidden", ())), "step_gflop": round(step_flops / 1e9, 3),
        "step_ms": round(step_s * 1e3, 2), "step_gflops_per_s": round(step_flops / step_s / 1e9, 1),
        "whole_minibatch_step_ms": round(whole_s * 1e3, 2),
        "matmul_n": n, "peak_gflops_per_s": round(2 * n**3 / square_s / 1e9, 1),
        "shaped_matmul": [size, width, width], "shaped_gflops_per_s": round(2 * size * width**2 / shaped_s / 1e9, 1),
        "update_steps_per_iteration": cls.Config().num_epochs * config.num_minibatches, "timed": "update scan",
        "devices": f"{len(jax.devices())} {jax.devices()[0].platform}", "cpu": host_cpu(), "cpu_count": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2), "date": datetime.date.today().isoformat(),
    }
    row["fraction_of_peak"] = round(row["step_gflops_per_s"] / row["peak_gflops_per_s"], 3)
    row["whole_minibatch_fraction_of_peak"] = round(step_flops / whole_s / 1e9 / row["peak_gflops_per_s"], 3)
    print(json.dumps(row, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    main(tyro.cli(Args))
