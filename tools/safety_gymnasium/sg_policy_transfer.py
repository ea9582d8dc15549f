"""A policy trained in crax on a Safety-Gymnasium task, evaluated in crax and in Safety-Gymnasium 1.0.0.

Two halves, two Pythons (Safety-Gymnasium 1.0.0 imports only on Python 3.10)::

    crax train ppo-lag --env SafetyPointGoal1-v0 --total-steps 2e6 --num-envs 256 --batch-size 128 \\
        --num-minibatches 16 --num-evals 0 --run-dir runs/sg-transfer-2e6
    python tools/safety_gymnasium/sg_policy_transfer.py export runs/sg-transfer-2e6 --episodes 300     # crax's venv
    /work/sg-venv/bin/python tools/safety_gymnasium/sg_policy_transfer.py safety-gymnasium --episodes 300

``export`` writes the run's deterministic policy as plain arrays (observation normalizer, the
actor's layers, the actuators' control ranges) to ``tools/safety_gymnasium/data/sg_policy_transfer.npz`` and
evaluates it on crax's env; ``safety-gymnasium`` runs the same arrays with numpy in
``safety_gymnasium.make(env_id)``, seeded episodes ``0..episodes-1``, and writes both evaluations,
with 95% confidence intervals of the means, to ``benchmarks/results/sg_policy_transfer.json``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
NPZ, JSON = Path(__file__).resolve().parent / "data" / "sg_policy_transfer.npz", RESULTS / "sg_policy_transfer.json"


def act(p: dict, obs: np.ndarray) -> np.ndarray:
    """The deterministic policy: normalize, the actor's MLP (swish between layers), tanh of the
    location, mapped onto the control ranges, as crax's ``Body.ctrl`` does."""
    x = np.asarray(obs, np.float64)
    if p["normalize"]:
        x = np.clip((x - p["mean"]) / np.sqrt(p["var"] + p["eps"]), -p["clip"], p["clip"])
    n = int(p["layers"])
    for i in range(n):
        x = x @ p[f"kernel{i}"] + p[f"bias{i}"]
        if i < n - 1:
            x = x / (1.0 + np.exp(-x))  # swish
    loc = x[: x.shape[-1] // 2]
    lo, hi = p["ctrl_lo"], p["ctrl_hi"]
    return lo + (np.tanh(loc) + 1.0) * 0.5 * (hi - lo)


def summary(values: list[float]) -> dict:
    a = np.asarray(values, np.float64)
    half = 1.96 * a.std(ddof=1) / math.sqrt(len(a)) if len(a) > 1 else float("nan")
    return {"mean": float(a.mean()), "ci95": float(half), "median": float(np.median(a)), "episodes": len(a),
            "per_episode": [round(float(v), 4) for v in a]}


def brief(evaluation: dict) -> str:
    """One engine's means and intervals, without the episodes' values."""
    return ", ".join(f"{m} {evaluation[m]['mean']:.2f} ± {evaluation[m]['ci95']:.2f} (median {evaluation[m]['median']:.2f})"
                     for m in ("return", "cost"))


def export(run_dir: str, episodes: int) -> None:
    import jax
    import jax.numpy as jnp

    import crax
    from crax.runs.evaluation import _policy_fn, _restore  # crax eval's restore and acting, one restore here

    record, _, config, trainer, restored, _ = _restore(run_dir, 1, None, None)
    env_id, env = record["env"], trainer.env  # the run's env, its env_kwargs included
    learner = trainer.learner(restored["state"], 0)
    layers = learner.actor.net.layers
    arrays = {f"kernel{i}": np.asarray(layer.kernel[...], np.float64) for i, layer in enumerate(layers)}
    arrays.update({f"bias{i}": np.asarray(layer.bias[...], np.float64) for i, layer in enumerate(layers)})
    lo, hi = np.asarray(env.body.ctrl_range, np.float64).T
    norm = learner.normalizer
    arrays.update(layers=len(layers), normalize=bool(config.normalize_observations), mean=np.asarray(norm.mean[...], np.float64),
                  var=np.asarray(norm.var[...], np.float64), eps=norm.eps, clip=norm.clip, ctrl_lo=lo, ctrl_hi=hi,
                  env_id=env_id, episode_length=env.episode_length)
    RESULTS.mkdir(exist_ok=True)
    np.savez(NPZ, **arrays)

    policy = jax.jit(_policy_fn(trainer, restored["state"].model, 0, deterministic=True))
    batch = crax.core.env.Vmap(env, episodes)

    @jax.jit
    def rollout(key):
        def step(carry, _):
            s, ret, cost, alive = carry
            s = batch.step(s, policy(s.obs))
            return (s, ret + alive * s.reward, cost + alive * s.cost, alive * (1.0 - s.done)), None

        zeros = jnp.zeros((episodes,))
        (_, ret, cost, _), _ = jax.lax.scan(step, (batch.reset(key), zeros, zeros, zeros + 1.0), None,
                                            length=env.episode_length)
        return ret, cost

    ret, cost = rollout(jax.random.key(0))
    obs = np.asarray(batch.reset(jax.random.key(1)).obs)
    saved = dict(np.load(NPZ))
    exported = np.stack([act(saved, o) for o in obs])
    np.testing.assert_allclose(exported, np.asarray(jax.vmap(env.body.ctrl)(policy(obs))), atol=1e-4)  # acts as crax
    out = {"env": env_id, "learner": record["learner"], "run": str(run_dir), "env_steps": int(restored["env_steps"]),
           "crax": {"return": summary(list(map(float, ret))), "cost": summary(list(map(float, cost)))}}
    JSON.write_text(json.dumps(out, indent=2) + "\n")
    print(brief(out["crax"]))


def evaluate_in_safety_gymnasium(episodes: int) -> None:
    import safety_gymnasium

    p = dict(np.load(NPZ))
    env_id = str(p["env_id"])
    env = safety_gymnasium.make(env_id)
    returns, costs = [], []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        ret = cost = 0.0
        for _ in range(int(p["episode_length"])):
            obs, reward, c, terminated, truncated, _ = env.step(act(p, obs))
            ret, cost = ret + float(reward), cost + float(c)
            if terminated or truncated:
                break
        returns.append(ret)
        costs.append(cost)
    out = json.loads(JSON.read_text())
    out["safety_gymnasium"] = {"version": safety_gymnasium.__version__, "return": summary(returns), "cost": summary(costs)}
    JSON.write_text(json.dumps(out, indent=2) + "\n")
    print(brief(out["safety_gymnasium"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["export", "safety-gymnasium"])
    parser.add_argument("run_dir", nargs="?")
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    if args.mode == "export":
        if args.run_dir is None:
            parser.error("export needs the run folder")
        export(args.run_dir, args.episodes)
    else:
        evaluate_in_safety_gymnasium(args.episodes)


if __name__ == "__main__":
    main()
