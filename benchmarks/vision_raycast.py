"""Frames per second of the ray-cast camera (crax.vision.raycast) on PointGoal1, jitted and vmapped.

Usage (a few minutes on a CPU)::

    PYTHONPATH=$PWD python benchmarks/vision_raycast.py [--sizes 64 256] [--batches 1 16 64] [--seconds 3]

The Point has no camera in its model, so this script places one on the agent: at its torso, 0.15 above
the torso's centre, looking along the torso's +x (the way it drives), level with the torso, fovy 90;
the torso's own geoms are excluded (``Camera.bodyexclude``). Every geom group is seen. Each batch of N
envs comes from ``env.reset`` with N keys; one call renders rgb and depth for the whole batch under
``jax.jit(jax.vmap(...))``. Prints, for each image size and N, the compile time and frames/s (N images
per call, timed over whole calls after one warm-up call, for at least ``--seconds``).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import crax
from crax.vision.camera import Camera
from crax.vision.raycast import render_at

HEIGHT = 0.15
"""The camera's height above the torso's centre (the Point's sphere has radius 0.1)."""

# camera axes in the torso's frame, as columns: x right (the torso's -y), y up (+z), z back (-x)
TORSO_TO_CAMERA = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--seconds", type=float, default=3.0, help="least time each measurement runs")
    args = parser.parse_args()

    env = crax.make("PointGoal1")
    torso = int(env.mj_model.body("agent/torso").id)
    m = env.mjx_model
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; PointGoal1: {m.ngeom} geoms, camera on the agent")
    print(f"{'size':>9} {'N':>4} {'compile s':>10} {'frames/s':>10}")
    for size in args.sizes:
        camera = Camera(size, size, fovy=90.0, rgb=True, depth=True, bodyexclude=torso)

        def ego(data, camera=camera):
            pos = data.xpos[torso] + jnp.array([0.0, 0.0, HEIGHT])
            return render_at(m, data, camera, pos, data.xmat[torso] @ TORSO_TO_CAMERA)

        for n in args.batches:
            data = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), n)).data
            fn = jax.jit(jax.vmap(ego))
            start = time.perf_counter()
            jax.block_until_ready(fn(data))
            compiled = time.perf_counter() - start
            calls, start = 0, time.perf_counter()
            while (elapsed := time.perf_counter() - start) < args.seconds or calls == 0:
                jax.block_until_ready(fn(data))
                calls += 1
            print(f"{size:>4}x{size:<4} {n:>4} {compiled:>10.1f} {calls * n / elapsed:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
