"""Does CPO's linearized cost model predict what its step does? A check on a trained CPO run.

CPO steps so that the linearized cost, c + bᵀΔθ, meets the bound, where b is the gradient of the cost
surrogate mean(ρ·Â_c) on the iteration's batch. This script takes a CPO run's latest checkpoint (seed
0), holds its policy θ fixed, collects ``--batches`` independent batches the way training does, and
for each batch k computes the step Δθ_k exactly as training would (``CPO.actor_step``), and the pure
cost-reducing step −sqrt(2δ/s)·H⁻¹b (CPO's case 0, the step OmniSafe's later ``cpo.py`` takes whenever
the bound is violated). For each step it reports, as cost per episode (× the episode length):

* ``in_sample``: the change of the cost surrogate on batch k, where the step was fitted;
* ``held_out``: the mean change of the cost surrogate on the other batches j ≠ k;
* ``true``: the change of the measured cost per step, from rollouts of θ and θ + Δθ_k with common
  random numbers (the same envs, keys and start states), ``--eval-steps`` steps of every env;

and the cost gradient's signal: sᵢⱼ = b_jᵀH_i⁻¹b_i over pairs i ≠ j estimates the noise-free part of
s = bᵀH⁻¹b (independent batches' noise cancels), so 1 − mean(sᵢⱼ)/mean(sᵢᵢ) is the share of s that is
sampling noise. ``python benchmarks/cpo_step_check.py RUN_DIR --out benchmarks/results/cpo_step_check.json``;
``--steps-per-env`` takes larger batches (``cpo_step_check_<BATCH STEPS>.json`` beside it for the table).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from crax.learners.families import make_trainer
from crax.learners.trust_region.cpo import CPO
from crax.learners.trust_region.family import PolicySpace, linearize
from crax.learners.trust_region.steps import EPS
from crax.runs import checkpoint as ckpt
from crax.runs.envs import get_learner, make_env


def restore(run_dir: Path):
    """The run's record, its config for one seed, a one-seed trainer and seed 0's latest checkpoint."""
    record = ckpt.read_config(run_dir)
    cls = get_learner(record["learner"])
    if not issubclass(cls, CPO):
        raise SystemExit(f"{run_dir} is a {record['learner']!r} run; this check needs a cpo run")
    stored = ckpt.config_from_dict(cls.Config, record["config"])
    env = make_env(record["env"], record["env_kwargs"] or {})
    restored = ckpt.load_checkpoint(run_dir, make_trainer(cls, stored, env).abstract_state())
    config = dataclasses.replace(stored, num_seeds=1)
    state = jax.tree.map(lambda x: x[:1], restored["state"])
    return record, config, make_trainer(cls, config, env), state, restored["env_steps"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--steps-per-env", type=int, help="steps of every env in a batch (default: the run's, "
                    "config.steps_per_env); a multiple of it is a larger batch of the same kind")
    ap.add_argument("--eval-steps", type=int, default=1000, help="rollout steps of every env per true measurement")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    record, config, trainer, state, env_steps = restore(args.run_dir)
    horizon = trainer.episode_length
    collect = jax.jit(trainer.collect, static_argnums=1)
    one = lambda x: x[0]  # noqa: E731  (seed 0)

    def prepared(model, tr):
        learner = nnx.merge(trainer.graphdef, model)[0]
        batch = trainer.iteration_batch(learner, tr)
        return learner, batch, PolicySpace(learner, batch.samples)

    @jax.jit
    def steps_of(model, tr):
        learner, batch, space = prepared(model, tr)
        lin = linearize(learner, space, batch)
        step, stats = learner.actor_step(space, batch)
        pure = -jnp.sqrt(2.0 * learner.config.target_kl / (lin.s + EPS)) * lin.p
        return {"theta": space.theta, "step": step, "pure": pure, "b": lin.b, "p": lin.p, "c": lin.c,
                "cost_scale": batch.cost_scale, "violation": batch.violation, "case": stats["cpo/case"],
                "kl": stats["policy/kl"], "kl_pure": space.kl(space.theta + pure)}

    @jax.jit
    def surrogate_change(model, tr, theta, new_theta):
        _, batch, space = prepared(model, tr)
        adv = batch.samples["adv_c"]
        return (space.surrogate(new_theta, adv) - space.surrogate(theta, adv)) * batch.cost_scale

    @jax.jit
    def with_actor(model, theta):
        learner, opt = nnx.merge(trainer.graphdef, model)
        space = PolicySpace(learner, {"obs": jnp.zeros((1, trainer.observation_size)),
                                      "u": jnp.zeros((1, trainer.action_size)), "logp": jnp.zeros((1,))})
        nnx.update(learner.actor, space.params(theta))
        return nnx.state((learner, opt))

    steps_per_env = args.steps_per_env or config.steps_per_env
    t0 = time.perf_counter()
    batches = []
    s = state
    for _ in range(args.batches):
        s, tr = collect(s, steps_per_env)
        batches.append(jax.tree.map(one, tr))
    model = jax.tree.map(one, state.model)
    out = [jax.device_get(steps_of(model, tr)) for tr in batches]
    k_n = len(out)

    # noise share of s = bᵀH⁻¹b: cross terms b_jᵀ p_i (i ≠ j) against the diagonal b_iᵀ p_i
    cross = np.array([[float(out[j]["b"] @ out[i]["p"]) for j in range(k_n)] for i in range(k_n)])
    diag = np.diag(cross)
    off = cross[~np.eye(k_n, dtype=bool)]

    # true change: rollouts of θ and θ + Δθ from the same env states with the same keys
    probe = state.replace(key=jax.random.split(jax.random.key(args.seed + 1), 1))

    def per_env_cost(m):
        st = probe.replace(model=jax.tree.map(lambda x: x[None], m))
        _, tr = collect(st, args.eval_steps)
        return np.asarray(tr.cost[0]).mean(axis=0) * horizon  # (N,) cost per episode-length of steps

    base = per_env_cost(model)
    rows = []
    for k, o in enumerate(out):
        row = {"batch": k, "case": int(o["case"]), "violation_per_episode": float(o["violation"]) * horizon,
               "s": float(diag[k])}
        for name in ("step", "pure"):
            new_theta = o["theta"] + o[name]
            in_sample = float(surrogate_change(model, batches[k], o["theta"], new_theta)) * horizon
            held = [float(surrogate_change(model, batches[j], out[j]["theta"], out[j]["theta"] + o[name])) * horizon
                    for j in range(k_n) if j != k]
            diff = per_env_cost(jax.device_get(with_actor(model, new_theta))) - base
            row[name] = {"in_sample": in_sample, "held_out": float(np.mean(held)), "held_out_each": held,
                         "true": float(diff.mean()), "true_se": float(diff.std(ddof=1) / np.sqrt(diff.size)),
                         "kl": float(o["kl"] if name == "step" else o["kl_pure"])}
        rows.append(row)
        print(json.dumps(row))

    summary = {
        "run": str(args.run_dir), "learner": record["learner"], "env": record["env"],
        "constraint_value": config.constraint_value,
        "env_steps": env_steps, "batches": k_n, "batch_steps": steps_per_env * config.num_envs,
        "eval_envs_x_steps": [config.num_envs, args.eval_steps], "episode_length": horizon,
        "cost_per_episode_at_theta": float(base.mean()), "bound": config.safety_bound,
        "s_diagonal_mean": float(diag.mean()), "s_cross_mean": float(off.mean()),
        "s_noise_share": float(1.0 - off.mean() / diag.mean()),
        "mean": {name: {key: float(np.mean([r[name][key] for r in rows])) for key in ("in_sample", "held_out", "true")}
                 for name in ("step", "pure")},
        "rows": rows, "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
