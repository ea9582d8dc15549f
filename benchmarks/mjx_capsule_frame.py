"""Where MJX parts from MuJoCo on the Doggo's recorded rollout: the plane–capsule contact frame.

Usage (a minute or two on a CPU; float64)::

    PYTHONPATH=$PWD python benchmarks/mjx_capsule_frame.py

Steps the 40 recorded random actions of ``SafetyDoggoGoal1-v0``
(``tests/data/safety_gym_doggo_reference.json``, ``random_actions``) with MuJoCo's ``mj_step`` in C on
crax's model, and from each of the 400 substeps' states runs one ``mjx.step`` (jitted, float64, the
solver at 100/50) against one ``mj_step``: first with MJX's own ``plane_capsule``, then with one that
takes the contact frame's first tangent along the capsule's axis projected on the floor however steep
the capsule stands, as MuJoCo's ``mjc_PlaneCapsule`` and ``mju_makeFrame`` do. MJX's (``mujoco/mjx/_src/
collision_primitive.py``, ``b = jp.where(b_norm < 0.5, ...)``) uses (0, 1, 0) for a capsule steeper than
60° from the floor; with condim 6 and the pyramidal cone that turns the friction pyramid. Prints, for
each, the substeps whose velocities part by more than 1e-9 (docs/safety_gymnasium.md, The Doggo).
"""

from __future__ import annotations

import json
import pathlib

import jax
import jax.numpy as jp
import mujoco
import numpy as np
from mujoco import mjx
from mujoco.mjx._src import collision_driver, collision_primitive, math
from mujoco.mjx._src.types import GeomType

import crax

DATA = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "safety_gym_doggo_reference.json"
PARTED = 1e-9
"""A substep whose velocities differ by more than this (m/s, rad/s) has parted."""


@collision_primitive.collider(ncon=2)
def plane_capsule_as_c(plane, cap):
    """MJX's ``plane_capsule`` with MuJoCo C's frame: the projected axis unless it vanishes."""
    n, axis = plane.mat[:, 2], cap.mat[:, 2]
    b, b_norm = math.normalize_with_norm(axis - n * jp.dot(n, axis))
    fallback = jp.where((-0.5 < n[1]) & (n[1] < 0.5), jp.array([0.0, 1.0, 0.0]), jp.array([0.0, 0.0, 1.0]))
    b = jp.where(b_norm < 1e-10, fallback, b)
    frame = jp.array([[n, b, jp.cross(n, b)]])
    segment = axis * cap.size[1]
    contacts = []
    for offset in (segment, -segment):
        dist, pos = collision_primitive._plane_sphere(n, plane.pos, cap.pos + offset, cap.size[0])
        contacts.append((dist[None], pos[None], frame))
    return jax.tree_util.tree_map(lambda *x: jp.concatenate(x), *contacts)


def substeps(env) -> list[tuple[int, int, mujoco.MjData]]:
    """The state before each substep of the recorded rollout, stepped in C."""
    rec = json.loads(DATA.read_text())["tasks"]["SafetyDoggoGoal1-v0"]
    case = next(c for c in rec["rollouts"] if c["name"] == "random_actions")
    m, body = env.mj_model, env.body
    d = mujoco.MjData(m)
    vase = m.jnt_qposadr[m.joint("vases/0").id]
    d.qpos[vase:vase + 2] = case["layout"]["vases"][0][:2]  # parked far away, as recorded
    d.qpos[slice(*body.qpos_adr)] = case["agent"]["qpos"]
    d.qvel[slice(*body.qvel_adr)] = case["agent"]["qvel"]
    out = []
    for k, action in enumerate(case["actions"]):
        d.ctrl[:] = np.clip(action, -1.0, 1.0)
        for s in range(body.frame_skip):
            out.append((k, s, mujoco.MjData(m)))
            mujoco.mj_copyData(out[-1][2], m, d)
            mujoco.mj_step(m, d)
    return out


def parted(m: mujoco.MjModel, states) -> list[tuple[int, int, float]]:
    model = mjx.put_model(m, impl="jax")
    step = jax.jit(lambda data: mjx.step(model, data))
    rows = []
    for k, s, d in states:
        got = np.asarray(step(mjx.put_data(m, d, impl="jax")).qvel)
        c = mujoco.MjData(m)
        mujoco.mj_copyData(c, m, d)
        mujoco.mj_step(m, c)
        if (gap := float(np.abs(got - c.qvel).max())) > PARTED:
            rows.append((k, s, gap))
    return rows


def main() -> None:
    env = crax.make("SafetyDoggoGoal1-v0")  # its model; crax's own float32 arrays are not used here
    jax.config.update("jax_enable_x64", True)
    m = env.mj_model
    m.opt.iterations, m.opt.ls_iterations = 100, 50
    states = substeps(env)
    key = (GeomType.PLANE, GeomType.CAPSULE)
    own = collision_driver._COLLISION_FUNC[key]
    for name, fn in (("MJX's plane_capsule", own), ("C's frame", plane_capsule_as_c)):
        collision_driver._COLLISION_FUNC[key] = fn
        rows = parted(m, states)
        first = f"first at step {rows[0][0]} substep {rows[0][1]} ({rows[0][2]:.2g})" if rows else "none"
        worst = max((r[2] for r in rows), default=0.0)
        print(f"{name}: {len(rows)} of {len(states)} substeps part by > {PARTED:g}; {first}; largest {worst:.2g}")
    collision_driver._COLLISION_FUNC[key] = own


if __name__ == "__main__":
    main()
