"""Layouts of Safety-Gymnasium's Button drawn by Safety-Gymnasium 1.0.0 and by crax, compared.

Safety-Gymnasium places the agent and the objects one after another, each at the first of 100
uniform draws that keeps its clearances, and draws the whole layout again when an object finds
none (about 60 times per layout at Button level 1). crax draws the same way
(:func:`crax.objects.placement.sample_fitting_layout`). This compares the two distributions by
their summaries: per object (in layout order), the mean and standard deviation of its distance
from the origin and of its distance to its nearest neighbour, over ``--layouts`` layouts each::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_layouts.py safety-gymnasium   # -> tools/safety_gymnasium/data/sg_layouts.json
    python tools/safety_gymnasium/sg_layouts.py compare                               # crax's, and the z-scores of the means

The first runs in Safety-Gymnasium's Python 3.10 environment (docs/safety_gymnasium.md) and
takes about ten minutes per 1000 layouts (its placement is Python); it also records how many
layouts Safety-Gymnasium drew per kept one.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "data" / "sg_layouts.json"
IDS = ("SafetyPointButton1-v0", "SafetyPointButton2-v0")


def summary(layouts: np.ndarray) -> dict:
    """Per object: mean and std of the distance from the origin and to the nearest other object."""
    radius = np.linalg.norm(layouts, axis=-1)
    gaps = np.linalg.norm(layouts[:, :, None] - layouts[:, None], axis=-1)
    gaps[:, np.arange(layouts.shape[1]), np.arange(layouts.shape[1])] = np.inf
    nearest = gaps.min(-1)
    return {"n": len(layouts), "radius_mean": radius.mean(0).tolist(), "radius_std": radius.std(0).tolist(),
            "nearest_mean": nearest.mean(0).tolist(), "nearest_std": nearest.std(0).tolist()}


def record(n: int) -> None:
    import safety_gymnasium
    from safety_gymnasium.utils.random_generator import RandomGenerator

    drawn = {"n": 0}
    sample = RandomGenerator.sample_layout

    def counting(self):
        drawn["n"] += 1
        return sample(self)

    RandomGenerator.sample_layout = counting
    out = {}
    for env_id in IDS:
        env = safety_gymnasium.make(env_id)
        env.reset(seed=0)
        rng = env.unwrapped.task.random_generator
        rng.set_random_seed(0)
        drawn["n"] = 0
        layouts = [rng.build_layout() for _ in range(n)]
        names = list(layouts[0])
        out[env_id] = {"objects": names, "layouts_per_kept": drawn["n"] / n,
                       **summary(np.asarray([[lay[k] for k in names] for lay in layouts]))}
        print(env_id, f"{drawn['n'] / n:.1f} layouts drawn per kept one", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


def compare(n: int) -> None:
    import jax
    import jax.numpy as jnp

    import crax

    ref = json.loads(OUT.read_text())
    for env_id in IDS:
        suite = crax.make(env_id).suite
        keepout = jnp.asarray([suite.agent_keepout] + [suite.objects[label].keepout for label in suite.order
                                                        for _ in range(suite.objects[label].count)], jnp.float32)
        draw = jax.jit(jax.vmap(lambda k: suite.draw_layout(k, keepout)))  # noqa: B023 - called in this iteration
        ours = summary(np.asarray(draw(jax.random.split(jax.random.key(0), n))))
        r = ref[env_id]
        print(f"{env_id}: {n} crax layouts against {r['n']} of Safety-Gymnasium's ({r['layouts_per_kept']:.0f} drawn per kept)")
        for stat in ("radius", "nearest"):
            a, b = np.asarray(r[f"{stat}_mean"]), np.asarray(ours[f"{stat}_mean"])
            se = np.sqrt(np.asarray(r[f"{stat}_std"]) ** 2 / r["n"] + np.asarray(ours[f"{stat}_std"]) ** 2 / n)
            z = (b - a) / se
            print(f"  {stat:8s} means: largest |difference| {np.abs(b - a).max():.3f} m, z-scores in "
                  f"[{z.min():.1f}, {z.max():.1f}] over {len(z)} objects")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("safety-gymnasium", "compare"))
    parser.add_argument("--layouts", type=int, default=1000)
    args = parser.parse_args()
    record(args.layouts) if args.mode == "safety-gymnasium" else compare(args.layouts)


if __name__ == "__main__":
    main()
