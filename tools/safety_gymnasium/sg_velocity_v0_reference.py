"""Records Safety-Gymnasium 1.0.0's Velocity-v0 tasks, for crax's fidelity tests.

Velocity-v0 steps as Velocity-v1 (``safety_<agent>_velocity_v1.py`` subclasses v0 and changes the
threshold only), with v0's thresholds, and its Swimmer's cost reads the planar speed where v1's
reads the x velocity. So this records what v0 defines, on one step each from hand-set states,
without the physics that ``sg_velocity_reference.py`` already records for v1. Run with the Python
3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md), from the
repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_velocity_v0_reference.py   # writes tests/data/safety_velocity_v0_reference.json

For each ``Safety{Agent}Velocity-v0`` id: the spaces, ``dt``, the episode length, the threshold,
and ``steps``: from a hand-set state (at rest; fast along x at twice the threshold; fast along y),
one ``env.step`` of a fixed action, with the state before and after it (``qpos``, ``qvel``), the
reward, the cost and the velocities Safety-Gymnasium reports.
"""

from __future__ import annotations

import json
import pathlib
import sys

import mujoco
import numpy as np
from sg_velocity_reference import AGENTS, Scene, box, g

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_velocity_v0_reference.json"
CASES = {"rest": None, "fast_x": 0, "fast_y": 1}
"""Hand-set states: the qvel entry set to twice the threshold (None: as drawn, near rest)."""


def record_step(scene: Scene, name: str, axis: int | None) -> dict:
    qpos, qvel = scene.state(False)
    if axis is not None:
        qvel[axis] = 2.0 * scene.base._velocity_threshold
    scene.set(qpos, qvel)
    space = scene.env.action_space
    action = scene.rng.uniform(space.low, space.high, space.shape).astype(np.float32)
    _, reward, cost, terminated, _, info = scene.env.step(action)
    data = scene.base.data
    return {"name": name, "qpos": g(qpos), "qvel": g(qvel), "action": g(action), "qpos_after": g(data.qpos),
            "qvel_after": g(data.qvel), "reward": float(reward), "cost": float(cost), "terminated": bool(terminated),
            "x_velocity": float(info["x_velocity"]), "y_velocity": float(info.get("y_velocity", 0.0))}


def main() -> None:
    import importlib.metadata as md

    out = {"safety_gymnasium": md.version("safety-gymnasium"), "gymnasium": md.version("gymnasium"),
           "mujoco": mujoco.__version__, "python": sys.version.split()[0], "tasks": {}}
    for agent in AGENTS:
        scene = Scene(agent, "v0")
        spec = scene.env.spec
        out["tasks"][f"Safety{agent}Velocity-v0"] = {
            "observation_space": box(scene.env.observation_space), "action_space": box(scene.env.action_space),
            "dt": float(scene.base.dt), "max_episode_steps": spec.max_episode_steps,
            "velocity_threshold": float(scene.base._velocity_threshold),
            "steps": [record_step(scene, name, axis) for name, axis in CASES.items()]}
        print(agent, "recorded", file=sys.stderr)
    OUT.write_text(json.dumps(out, separators=(",", ":")))
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
