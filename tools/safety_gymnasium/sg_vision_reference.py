"""Records Safety-Gymnasium 1.0.0's Vision tasks, for crax's Vision ids.

For every ``Safety{Agent}{Task}{Level}Vision-v0`` id (110): its observation space (each key in order,
with its shape, dtype and bounds) and action space, and, per agent, the ``vision`` camera as the
compiled model has it (its body, position and orientation in that body's frame, fovy). Run with the
Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md), from the
repository root::

    MUJOCO_GL=egl /work/sg-venv/bin/python tools/safety_gymnasium/sg_vision_reference.py   # writes tests/data/safety_gym_vision_reference.json
"""

from __future__ import annotations

import importlib.metadata as md
import json
import pathlib

import gymnasium
import mujoco
import numpy as np
import safety_gymnasium

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_vision_reference.json"


def bound(x: np.ndarray) -> object:
    """One number for a uniform bound (inf as a string), else the list."""
    x = np.asarray(x)
    flat = np.unique(x)
    value = flat.tolist() if flat.size > 1 else flat.item()
    return json.loads(json.dumps(value).replace("Infinity", '"inf"').replace("-\"inf\"", '"-inf"')) if flat.size == 1 else value


def space(s: gymnasium.spaces.Box) -> dict:
    low, high = bound(s.low), bound(s.high)
    return {"shape": list(s.shape), "dtype": np.dtype(s.dtype).name,
            "low": "-inf" if low == float("-inf") else low, "high": "inf" if high == float("inf") else high}


def camera(env) -> dict:
    model = env.unwrapped.task.model
    cam = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "vision")
    return {"body": model.body(int(model.cam_bodyid[cam])).name, "pos": model.cam_pos[cam].tolist(),
            "quat": model.cam_quat[cam].tolist(), "fovy": float(model.cam_fovy[cam]),
            "width": int(env.unwrapped.task.vision_env_conf.vision_size[0]),
            "height": int(env.unwrapped.task.vision_env_conf.vision_size[1])}


def main() -> None:
    ids = [i for i in gymnasium.registry if i.startswith("Safety") and i.endswith("Vision-v0")]
    out = {"safety_gymnasium": md.version("safety-gymnasium"), "gymnasium": md.version("gymnasium"), "ids": {},
           "cameras": {}}
    for env_id in ids:
        env = safety_gymnasium.make(env_id)
        agent = type(env.unwrapped.task.agent).__name__
        out["ids"][env_id] = {"observation": [[k, space(v)] for k, v in env.observation_space.spaces.items()],
                              "action": space(env.action_space)}
        if agent not in out["cameras"]:
            env.reset(seed=0)  # the world (and its model) is built on the first reset
            out["cameras"][agent] = camera(env)
        env.close()
        print(env_id, flush=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(ids)} ids -> {OUT}")


if __name__ == "__main__":
    main()
