"""Records Safety-Gymnasium 1.0.0's near plane in its Vision tasks, for crax's Vision ids.

MuJoCo's renderer does not draw what lies nearer the camera, along its optical axis, than
``visual/map/znear`` times the model's extent (``stat.extent``: the largest side of the bounding box
of the bodies, joints and geoms at ``qpos0``). Safety-Gymnasium leaves ``znear`` at MuJoCo's 0.01
and compiles its model anew at every reset with the objects where that episode's layout puts them,
so where the layout is drawn (Goal, Button, Push, Fading) its near plane moves from episode to
episode; Circle, Run and Race have fixed scenes. Recorded per task and level on the Point (the agent
changes the extent little: the Car's medians are within 5 % of the Point's): ``znear`` and the
extent's smallest, median and largest value over the first :data:`RESETS` resets (seeds 0, 1, ...).
The extent is read on the state-based id: its model is the Vision id's (resetting a Vision id
renders, which needs OpenGL). Run with the Python 3.10 environment that has
``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md), from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_vision_near.py   # writes tests/data/safety_gym_vision_near.json
"""

from __future__ import annotations

import json
import pathlib
import sys
import warnings

import numpy as np
import safety_gymnasium
import sg_reference_race  # noqa: F401  (its import lets the Race scenes build without the wheel's missing textures)
from sg_reference import header  # siblings: this script's folder is on sys.path

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_vision_near.json"
RESETS = 20
"""Resets per task and level."""
TASKS = {"Goal": 3, "Button": 3, "Push": 3, "Circle": 3, "Run": 1, "Race": 3, "FadingEasy": 3, "FadingHard": 3}
"""Safety-Gymnasium's navigation tasks with a Vision twin, and their number of levels."""


def record(task: str, level: int) -> dict:
    env = safety_gymnasium.make(f"SafetyPoint{task}{level}-v0")
    extents = []
    for seed in range(RESETS):
        env.reset(seed=seed)
        extents.append(float(env.unwrapped.task.model.stat.extent))
    znear = float(env.unwrapped.task.model.vis.map.znear)
    env.close()
    return {"znear": znear, "extent": {"min": min(extents), "median": float(np.median(extents)), "max": max(extents)}}


def main(out_path: pathlib.Path = OUT) -> None:
    warnings.filterwarnings("ignore")
    out = {k: v for k, v in header().items() if k != "tasks"}
    out.update({"agent": "Point", "resets": RESETS, "tasks": {}})
    for task, levels in TASKS.items():
        out["tasks"][task] = {}
        for level in range(levels):
            out["tasks"][task][str(level)] = record(task, level)
            print(task, level, out["tasks"][task][str(level)], file=sys.stderr, flush=True)
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
