"""C MuJoCo's ceiling on an env's physics model against its whole scene (decision 71).

``crax bench`` rolls out the model the env steps: its scene without the inert bodies (goals, zones).
This rolls out both from the same reset states under the same actions, alternating, and prints
each one's env steps/s: what leaving the inert bodies out gains C MuJoCo itself. Nothing is written.

Usage::

    python benchmarks/scene_ceiling.py --env PointGoal1 --num-envs 1024
"""

from __future__ import annotations

import dataclasses

import tyro

from crax.devices import startup


@dataclasses.dataclass(frozen=True)
class Args:
    env: str = "PointGoal1"
    """Env id."""
    num_envs: int = 1024
    """Batch of reset states rolled out."""
    repeats: int = 3
    """Timed rollouts of each model (alternating); the fastest of each is kept."""


def main(args: Args) -> None:
    startup.configure_jax()  # before anything starts JAX: one host device per core, as crax bench
    import jax

    import crax
    from crax.bench_ceiling import Ceiling, unavailable
    from crax.core.env import wrap_for_training

    if why := unavailable():
        raise SystemExit(f"no C MuJoCo ceiling: {why}")
    env = crax.make(args.env)
    data = jax.jit(wrap_for_training(env, args.num_envs).reset)(jax.random.key(0)).data
    steps = max(20, 200_000 // args.num_envs)
    ceilings = {"physics model": Ceiling(env, data, steps), "whole scene": Ceiling(env, data, steps, whole_scene=True)}
    best = dict.fromkeys(ceilings, 0.0)
    try:
        for c in ceilings.values():
            c.run()  # warm-up
        for _ in range(args.repeats):
            for name, c in ceilings.items():
                best[name] = max(best[name], c.timed()[0])
    finally:
        for c in ceilings.values():
            c.close()
    for name, c in ceilings.items():
        print(f"{args.env} N={args.num_envs} C MuJoCo, {name} (nbody {c.model.nbody}, ngeom {c.model.ngeom}): "
              f"{best[name]:,.0f} env steps/s on {c.threads} thread(s)")


if __name__ == "__main__":
    main(tyro.cli(Args))
