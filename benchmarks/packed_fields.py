"""The training stack carrying its physics model's whole ``Data`` against carrying MuJoCo's state and
the fields the step reads (decision 74), in one process, compile excluded.

Usage::

    CRAX_HOST_DEVICES=1 taskset -c 0 python benchmarks/packed_fields.py --env PointGoal1 --num-envs 256 1024

Each stack (``AutoReset(Vmap(EpisodeStats(PackedState(env, whole=...))))``) runs ``--steps`` random
env steps in one jitted ``lax.scan``; the two calls alternate ``--repeats`` times and the fastest of
each is kept, so a load that comes and goes slows both alike. It prints µs an env step, the arrays
each carries an env, and how far apart their observations end (the two are different programs:
float rounding). Nothing is written: the numbers go into docs/DECISIONS.md by hand.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import tyro

import crax
from crax.core.env import AutoReset, EpisodeStats, PackedState, Vmap
from crax.devices import xla_options


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id."""
    num_envs: tuple[int, ...] = (256, 1024)
    """Numbers of parallel envs."""
    steps: int = 100
    """Env steps a timed call."""
    repeats: int = 5
    """Timed calls of each stack (alternating); the fastest is kept."""


def _program(env, stack, n: int, steps: int):
    def rollout(state, key):
        def body(s, k):
            s = stack.step(s, jax.random.uniform(k, (n, env.action_size), minval=-1.0, maxval=1.0))
            return s, s.obs

        return jax.lax.scan(body, state, jax.random.split(key, steps))

    state = xla_options.jit(stack.reset)(jax.random.key(0))
    return xla_options.jit(rollout).lower(state, jax.random.key(1)).compile(), state


def main(args: Args) -> None:
    env = crax.make(args.env)
    for n in args.num_envs:
        stacks = {name: AutoReset(Vmap(EpisodeStats(PackedState(env, whole=whole)), n))
                  for name, whole in (("whole Data", True), ("state + reads", False))}
        programs = {name: _program(env, stack, n, args.steps) for name, stack in stacks.items()}
        obs = {name: jax.block_until_ready(c(s, jax.random.key(1)))[1] for name, (c, s) in programs.items()}
        best = dict.fromkeys(programs, float("inf"))
        for r in range(args.repeats):
            for name, (c, s) in programs.items():
                t = time.perf_counter()
                jax.block_until_ready(c(s, jax.random.key(r)))
                best[name] = min(best[name], time.perf_counter() - t)
        gap = float(jnp.max(jnp.abs(obs["whole Data"] - obs["state + reads"])))
        for name, (_, s) in programs.items():
            print(f"{args.env} {n} envs, {name}: {best[name] / args.steps / n * 1e6:.3f} µs an env step, "
                  f"{len(jax.tree.leaves(s.data))} arrays in state.data")
        print(f"  observations after {args.steps} steps within {gap:.2e}; step_reads {sorted(env.step_reads)}")


if __name__ == "__main__":
    main(tyro.cli(Args))
