"""Records what Safety-Gymnasium 1.0.0's ``vision`` camera sees on hand-set states, for crax's Vision ids.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md
says how to make it), from the repository root::

    MUJOCO_GL=egl /work/sg-venv/bin/python tools/safety_gymnasium/sg_vision_frames.py   # writes tests/data/safety_gym_vision_frames.json

For each navigation agent (Point, Car, Doggo, Ant, Racecar) on ``Safety{Agent}Goal1Vision-v0``, a few
cases: the agent resting on the floor (the Point at its pose; the others in ``sg_reference.py``'s
settled pose, moved and turned), then the goal and some hazards each put on the floor point the
camera sees at a hand-chosen spot of the image (:data:`CASES`: across the width, and down from the
horizon to the bottom edge; the floor point is cast through the camera here and rounded to the
millimetre), some cut by the image's edges; the other hazards and the vase are parked 20 m behind
the camera. The state is set as ``sg_reference.py``'s scenes set it (after a reset, bodies' ``pos``
and the agent's qpos, then ``mj_forward``).

Each frame is rendered at :data:`SIZE` × :data:`SIZE` by MuJoCo's own renderer (``mujoco.Renderer``,
segmentation on) from the camera ``vision`` with every geom group shown: the pose, field of view,
near and far planes and geoms of Safety-Gymnasium's ``_obs_vision`` (``bases/underlying.py``'s
``render`` turns every group on), without its lidar markers. The recorder checks that: its RGB frame
must equal Safety-Gymnasium's own ``_obs_vision`` at that size but for the pixels of those markers
(``rgb_mismatch``: the share of pixels that differ, recorded).

Recorded per case: the agent's qpos, the whole layout (goal, hazards, vase), and per object
(``goal``, ``hazard{i}`` of the hazards in view, ``agent``: the geoms of the agent's bodies) its
pixel count and centroid (``[x, y]``: column and row of the pixels' centres, from the image's top
left corner, in pixels). Per agent: the camera's near plane (``znear · extent`` in metres: OpenGL
clips what is nearer along the optical axis) and far plane.
"""

from __future__ import annotations

import json
import pathlib
import sys

import mujoco
import numpy as np
from sg_reference import AntScene, CarScene, Scene, header, turned  # siblings: this script's folder is on sys.path
from sg_reference_doggo import DoggoScene
from sg_reference_racecar import START, RacecarScene

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_vision_frames.json"
SIZE = 64
"""The frames' side in pixels (the size vision papers train at)."""
PARK = 20.0
"""How far behind the camera unused objects are parked (m)."""

SCENES = {"Point": Scene, "Car": CarScene, "Doggo": DoggoScene, "Ant": AntScene, "Racecar": RacecarScene}

CASES = {
    "spread": {"pose": ([0.3, -0.2], 0.6),
               "goal": (0.5, 2.2), "hazards": [(0.2, 1.0), (0.8, 1.3), (0.03, 1.7)]},
    "edges": {"pose": ([-0.4, 0.5], -2.2),
              "goal": (0.3, 2.4), "hazards": [(0.75, 1.9), (0.97, 1.0), (0.3, 0.9)]},
}
"""Per case: the agent's pose (xy, and the yaw it is turned by from its settled pose: the Point's
heading), and where each object is put, ``(u, d)``: ``d`` metres ahead of the camera along its
heading on the floor, where the image's column at ``u`` (the fraction of its width from its left
edge) sees (:func:`floor_point`). The hazards at u 0.03 and 0.97 are cut by the image's edges (the
field of view's). The goal is the farthest object, so that Safety-Gymnasium's (a cylinder 0.3 m
tall) hides none of the hazards; no two objects overlap on the floor, and none is under the agent
(:func:`check_apart`)."""
RADII = {"goal": 0.3, "hazards": 0.2}
"""The objects' radii on the floor (m)."""
CLEARANCE = 0.1
"""The least gap between two objects on the floor, and between an object and the agent's reach (m)."""
REACH = 0.25
"""How far from its centre the agent may hide the floor (m; the Ant's and the Doggo's legs)."""


def rest_state(s: Scene, agent: str) -> dict:
    """The agent's state at rest on the floor at the origin, facing its start heading."""
    if agent == "Point":
        return {"xy": [0.0, 0.0], "yaw": 0.0}
    if agent == "Racecar":
        return s.driven({"qpos": START}, [0.0, 0.0], 10)  # type: ignore[attr-defined]
    return s.settled()  # type: ignore[attr-defined]


def posed(agent: str, rest: dict, xy, yaw: float) -> dict:
    if agent == "Point":
        return {"xy": list(xy), "yaw": yaw}
    return turned(rest, xy, yaw)


def camera_frame(s: Scene) -> tuple[np.ndarray, np.ndarray, float]:
    """The ``vision`` camera's world position, orientation (columns: its x, y, z axes) and fovy."""
    m, d = s.task.model, s.task.data
    cam = m.camera("vision").id
    return d.cam_xpos[cam].copy(), d.cam_xmat[cam].reshape(3, 3).copy(), float(m.cam_fovy[cam])


def floor_point(s: Scene, u: float, ahead: float) -> list[float]:
    """The floor point ``ahead`` metres in front of the camera along its heading that the image's
    column at ``u`` (:data:`CASES`) sees, rounded to the millimetre."""
    pos, rot, fovy = camera_frame(s)
    forward = -rot[:2, 2] / np.linalg.norm(rot[:2, 2])  # the optical axis on the floor
    right = np.array([forward[1], -forward[0]])
    x = (2.0 * u - 1.0) * np.tan(np.radians(fovy) / 2)  # the column's slope in the camera's frame (square image)
    base = np.array([*(pos[:2] + ahead * forward), 0.0]) - pos
    side = np.array([*right, 0.0])
    a, e = rot[:, 0] @ base, -(rot[:, 2] @ base)  # the point's camera x and depth, linear in the lateral offset
    b, f = rot[:, 0] @ side, -(rot[:, 2] @ side)
    lateral = (x * e - a) / (b - x * f)
    return [round(float(c), 3) for c in pos[:2] + ahead * forward + lateral * right]


def behind(s: Scene, n: int, row: int) -> list[list[float]]:
    """``n`` spots :data:`PARK` behind the camera, 1.5 m apart, in row ``row``."""
    pos, rot, _ = camera_frame(s)
    back = rot[:2, 2] / np.linalg.norm(rot[:2, 2])  # the camera's +z: backwards
    side = np.array([-back[1], back[0]])
    return [[round(float(c), 3) for c in pos[:2] + back * (PARK + 3.0 * row) + side * 1.5 * (i - n / 2)] for i in range(n)]


def check_apart(s: Scene, goal: list, hazards: list) -> None:
    """Refuses a layout where two objects overlap on the floor, the agent stands in one, or a hazard
    is farther ahead of the camera than the goal."""
    agent = s.task.data.body("agent").xpos[:2]
    pos, rot, _ = camera_frame(s)
    forward = -rot[:2, 2] / np.linalg.norm(rot[:2, 2])
    discs = [(np.asarray(goal[0]), RADII["goal"])] + [(np.asarray(h), RADII["hazards"]) for h in hazards]
    for i, (p, r) in enumerate(discs):
        if np.linalg.norm(p - agent) < r + REACH + CLEARANCE:
            raise ValueError(f"object {i} at {p.tolist()} is {np.linalg.norm(p - agent):.2f} m from the agent")
        for q, rq in discs[:i]:
            if np.linalg.norm(p - q) < r + rq + CLEARANCE:
                raise ValueError(f"objects at {p.tolist()} and {q.tolist()} overlap")
        if i and (p - discs[0][0]) @ forward > 0:
            raise ValueError(f"hazard at {p.tolist()} is farther ahead than the goal")


def segmentation(s: Scene, renderer: mujoco.Renderer) -> np.ndarray:
    """The geom id each pixel sees (-1: none), as Safety-Gymnasium's camera sees the scene."""
    option = mujoco.MjvOption()
    option.geomgroup[:] = 1
    renderer.update_scene(s.task.data, "vision", option)
    renderer.enable_segmentation_rendering()
    out = renderer.render()
    renderer.disable_segmentation_rendering()
    ids, types = out[..., 0], out[..., 1]
    return np.where(types == int(mujoco.mjtObj.mjOBJ_GEOM), ids, -1)


def rgb_mismatch(s: Scene) -> float:
    """The share of pixels where MuJoCo's renderer's RGB frame (every geom group shown) differs from
    Safety-Gymnasium's own ``_obs_vision``, both at its size (256): its lidar markers, which it draws
    over the agent, and nothing else."""
    theirs = s.task._obs_vision()  # noqa: SLF001
    height, width = theirs.shape[:2]
    renderer = mujoco.Renderer(s.task.model, height, width)
    option = mujoco.MjvOption()
    option.geomgroup[:] = 1
    renderer.update_scene(s.task.data, "vision", option)
    return float(np.mean(np.any(renderer.render() != theirs, axis=-1)))


def stats(mask: np.ndarray) -> dict:
    rows, cols = np.nonzero(mask)
    if not rows.size:
        return {"pixels": 0, "centroid": None}
    return {"pixels": int(rows.size), "centroid": [round(float(cols.mean() + 0.5), 3), round(float(rows.mean() + 0.5), 3)]}


def record_case(s: Scene, agent: str, rest: dict, case: dict, renderer: mujoco.Renderer) -> dict:
    counts = s.counts
    xy, yaw = case["pose"]
    state = posed(agent, rest, xy, yaw)
    s.set(state, {})  # the camera's pose, for placing the objects
    goal = [floor_point(s, *case["goal"])]
    hazards = [floor_point(s, *uv) for uv in case["hazards"]]
    parked = behind(s, counts["hazards"] - len(hazards) + counts["vases"], 0)
    layout = {"goal": goal, "hazards": hazards + parked[: counts["hazards"] - len(hazards)],
              "vases": [[*p, 0.0] for p in parked[counts["hazards"] - len(hazards):]]}
    check_apart(s, goal, hazards)
    start = s.set(state, layout)
    m, d = s.task.model, s.task.data
    ids = segmentation(s, renderer)
    agent_geoms = [g for g in range(m.ngeom) if m.body_rootid[m.geom_bodyid[g]] == m.body("agent").id]
    objects = {"goal": stats(ids == m.geom("goal").id), "agent": stats(np.isin(ids, agent_geoms))}
    for i in range(len(hazards)):
        objects[f"hazard{i}"] = stats(ids == m.geom(f"hazard{i}").id)
    seen = {m.geom(int(g)).name or f"geom{int(g)}" for g in np.unique(ids) if g >= 0}
    return {"qpos": d.qpos[: nq(m)].tolist(), "layout": start["layout"], "objects": objects,
            "seen": sorted(seen), "rgb_mismatch": round(rgb_mismatch(s), 4)}


def nq(m: mujoco.MjModel) -> int:
    """The agent's qpos size: its joints come first."""
    agent = m.body("agent").id
    joints = [j for j in range(m.njnt) if m.body_rootid[m.jnt_bodyid[j]] == agent]
    last = max(joints)
    width = {0: 7, 1: 4}.get(int(m.jnt_type[last]), 1)
    return int(m.jnt_qposadr[last]) + width


def record_agent(agent: str) -> dict:
    s = SCENES[agent](f"Safety{agent}Goal1Vision-v0")
    rest = rest_state(s, agent)
    s.set(posed(agent, rest, [0.0, 0.0], 0.0), {})
    m = s.task.model
    renderer = mujoco.Renderer(m, SIZE, SIZE)
    out = {"camera": {"znear": float(m.vis.map.znear * m.stat.extent), "zfar": float(m.vis.map.zfar * m.stat.extent),
                      "extent": float(m.stat.extent), "fovy": float(m.cam_fovy[m.camera("vision").id])},
           "cases": {name: record_case(s, agent, rest, case, renderer) for name, case in CASES.items()}}
    return out


def main() -> None:
    out = {k: v for k, v in header().items() if k != "tasks"}
    out.update({"size": SIZE, "agents": {}})
    for agent in SCENES:
        out["agents"][agent] = record_agent(agent)
        print(agent, "recorded", file=sys.stderr)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
