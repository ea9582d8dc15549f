"""Records Safety-Gymnasium 1.0.0's Doggo on hand-set states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md
says how to make it), from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_reference_doggo.py   # writes tests/data/safety_gym_doggo_reference.json

The scenes are ``sg_reference.py``'s (the agent, the goal, hazards and vases set by hand
after a reset, then ``mj_forward``), with the Doggo's whole joint state written and recorded
(:class:`DoggoAgent`: qpos 20, the root's position and quaternion and 13 hinge angles, waist
included; qvel 19; ctrl 12). It records:

- ``model``: the Doggo's compiled masses, inertias, joint ranges, stiffness, spring references,
  armature, gears and geom sizes, as Safety-Gymnasium builds its scene;
- for every Doggo id Safety-Gymnasium registers that crax serves (Goal, Button, Push, Circle 0-2,
  Run 0, FadingEasy and FadingHard 0-2): the spaces, the observation's keys and sizes, dt, the
  episode length, extents and object counts (:meth:`Scene.spaces`);
- on ``SafetyDoggoGoal1-v0``: states (the reset pose falling, standing on the floor, standing with its
  motors driven and moving, tilted and spinning in the air, on its back, in a hazard, the goal and
  hazards in view), each with Safety-Gymnasium's observation (touch sensors included) and costs;
  a 40-step rollout of fixed random actions from standing, with each step's observation, reward,
  cost and joint state;
- on ``SafetyDoggoGoal2-v0`` (its vases cost): a vase 3 mm into a front foot and a vase's edge 3 mm
  into the torso's nose (the torso meets objects through a capsule in crax).
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
from sg_reference import (  # a sibling: Python puts this script's folder on sys.path
    AntAgent,
    CircleScene,
    Scene,
    euler_quat,
    header,
    rounded,
    turned,
    write,
)
from sg_reference_run_fading import RunScene

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_doggo_reference.json"
NQ, NV, NU = 20, 19, 12
"""The Doggo's qpos, qvel and ctrl sizes (free joint and 13 hinges; 12 motors)."""
HINGES = 13
ROLLOUT_STEPS = 40


def doggo_qpos(xy, z: float = 0.22, yaw: float = 0.0, pitch: float = 0.0, roll: float = 0.0, hinges=None) -> list:
    """The Doggo's qpos: root at (x, y, z) turned by (roll, pitch, yaw), then its 13 hinge angles
    (Safety-Gymnasium's start: all 0)."""
    hinges = np.zeros(HINGES) if hinges is None else hinges
    return [float(v) for v in [*xy, z, *euler_quat(yaw, pitch, roll), *hinges]]


class DoggoAgent(AntAgent):
    """Mixin for a scene of Safety-Gymnasium's Doggo: the agent's state is written and recorded
    whole (qpos 20, qvel 19, ctrl 12), and each rollout step also records the torso's height,
    heading, qpos and qvel (the Ant's mixin with the Doggo's sizes; the Doggo never dies). Settled
    (:meth:`~sg_reference.WholeStateAgent.settled`, from its start pose), it stands on its front feet
    and rear knees."""

    nq, nv, nu = NQ, NV, NU

    def start_qpos(self) -> list[float]:
        return doggo_qpos([0.0, 0.0])


class DoggoScene(DoggoAgent, Scene):
    """A Goal env on the Doggo, set by hand."""


class DoggoCircleScene(DoggoAgent, CircleScene):
    """A Circle env on the Doggo (only the agent is set)."""


class DoggoRunScene(DoggoAgent, RunScene):
    """Run on the Doggo."""


def model_record(s: Scene) -> dict:
    """The Doggo's compiled model as Safety-Gymnasium builds it (its bodies, joints, actuators, geoms)."""
    m = s.task.model
    bodies = [b for b in range(m.nbody) if m.body_rootid[b] == m.body("agent").id]
    joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] in bodies]
    geoms = [g for g in range(m.ngeom) if m.geom_bodyid[g] in bodies]
    return {"body_mass": m.body_mass[bodies].tolist(), "body_inertia": m.body_inertia[bodies].tolist(),
            "body_ipos": m.body_ipos[bodies].tolist(), "body_pos": m.body_pos[bodies[1:]].tolist(),
            "joint_names": [m.joint(j).name for j in joints], "jnt_range": m.jnt_range[joints].tolist(),
            "jnt_stiffness": m.jnt_stiffness[joints].tolist(),
            "qpos_spring": [float(m.qpos_spring[m.jnt_qposadr[j]]) for j in joints],
            "dof_armature": m.dof_armature[:NV].tolist(), "dof_damping": m.dof_damping[:NV].tolist(),
            "actuator_joint": [m.joint(int(j)).name for j in m.actuator_trnid[:, 0]],
            "actuator_gear": m.actuator_gear[:, 0].tolist(), "actuator_ctrlrange": m.actuator_ctrlrange.tolist(),
            "geom_names": [m.geom(g).name for g in geoms], "geom_type": m.geom_type[geoms].tolist(),
            "geom_size": m.geom_size[geoms].tolist(), "geom_condim": m.geom_condim[geoms].tolist(),
            "geom_friction": m.geom_friction[geoms].tolist(),
            "timestep": m.opt.timestep, "integrator": int(m.opt.integrator), "iterations": int(m.opt.iterations),
            "frame_skip": s.task.sim_conf.frameskip_binom_n, "z_height": float(s.task.agent.z_height),
            "agent_keepout": s.task.agent.keepout}


def doggo_states(s: DoggoAgent) -> dict[str, dict]:
    """The Doggo states the records start from (names -> qpos, qvel, ctrl)."""
    rng = np.random.default_rng(5)
    m = s.task.model
    lo, hi = m.jnt_range[1:1 + HINGES].T
    stand = s.settled()
    driven = {**stand, "qvel": (np.asarray(stand["qvel"]) + rng.uniform(-0.5, 0.5, NV)).tolist(),
              "ctrl": rng.uniform(-1.0, 1.0, NU).tolist()}
    return {
        "stand": stand,
        "reset_pose": {"qpos": doggo_qpos([0.0, 0.0]), "qvel": [0.0] * NV, "ctrl": [0.0] * NU},
        "driven": driven,
        "tilted_moving": {"qpos": doggo_qpos([0.0, 0.0], z=0.35, yaw=2.0, pitch=-0.3, roll=0.4, hinges=rng.uniform(lo, hi)),
                          "qvel": rng.uniform(-1.5, 1.5, NV).tolist(), "ctrl": rng.uniform(-1.0, 1.0, NU).tolist()},
        # on its back, legs up, the torso's cylinders 0.5 mm into the floor
        "on_its_back": {"qpos": doggo_qpos([0.0, 0.0], z=0.037, roll=np.pi), "qvel": [0.0] * NV, "ctrl": [0.0] * NU},
    }


def nose_against(s: DoggoScene, state: dict, depth: float = 0.003) -> list[float]:
    """A vase turned 45° whose vertical edge presses ``depth`` into the torso's front face (x = 0.1),
    2 mm to the side of its axis, the Doggo in ``state``: nothing else of the Doggo touches it. (Straight
    ahead, Safety-Gymnasium's pseudo-lidar puts the vase in a 17th bin of 16 and fails.)"""
    s.set(state, {})
    d = s.task.data
    mat = d.body("agent").xmat.reshape(3, 3)
    forward = mat[:2, 0] / np.linalg.norm(mat[:2, 0])
    nose = d.body("agent").xpos[:2] + 0.1 * forward
    side = np.array([-forward[1], forward[0]])
    centre = nose + (0.1 * np.sqrt(2) - depth) * forward + 0.002 * side
    return [float(centre[0]), float(centre[1]), float(np.arctan2(forward[1], forward[0]) + np.pi / 4)]


def doggo_goal_records(env_id: str) -> dict:
    """Goal 1: every observation key on hand-set states and a rollout of random actions."""
    s = DoggoScene(env_id)
    doggo = doggo_states(s)
    stand = doggo["stand"]
    hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
    states = [s.record_state(name, agent, layout) for name, agent, layout in [
        ("reset_pose_falling", turned(doggo["reset_pose"], [0.1, -0.2], 0.7), {"goal": [[1.2, 0.4]]}),
        ("standing", turned(stand, [-0.3, 0.5], -2.5), {"goal": [[-1.0, -1.1]]}),
        ("standing_driven", turned(doggo["driven"], [0.2, 0.1], 1.1), {"goal": [[1.0, 1.0]], "hazards": hz}),
        ("tilted_moving", doggo["tilted_moving"], {"goal": [[0.9, -0.7]], "hazards": hz}),
        ("on_its_back", doggo["on_its_back"], {"goal": [[-0.4, 1.3]]}),
        ("hazard_inside", turned(stand, [0.62, 0.31], -1.0), {"goal": [[-1.0, 1.0]], "hazards": hz}),
        ("vases_seen", turned(stand, [0.0, 0.0], -0.4), {"goal": [[1.0, 1.0]], "vases": [[0.7, -0.4, 0.3]]}),
    ]]
    actions = np.random.default_rng(3).uniform(-1.0, 1.0, (ROLLOUT_STEPS, NU))
    rollouts = [s.record_rollout("random_actions", stand, {"goal": [[1.2, 0.6]], "hazards": [[0.5, -0.4], [-0.6, 0.2]]},
                                 actions)]
    return {**s.spaces(), "model": model_record(s), "states": states, "rollouts": rollouts}


def doggo_vase_records(env_id: str) -> dict:
    """Goal 2 (vases cost): a vase pressed into a front foot and into the torso's nose."""
    s = DoggoScene(env_id)
    stand = s.settled()
    foot, yaw = s.pressed_against(stand, "ankle_1", 0.1, reach=0.016)
    states = [s.record_state("vase_touching_foot", stand, {"goal": [[1.0, -1.0]], "vases": [[*foot, yaw]]}),
              s.record_state("vase_at_nose", stand, {"goal": [[1.0, -1.0]], "vases": [nose_against(s, stand)]})]
    return {**s.spaces(), "states": states}


def space_records(env_id: str) -> dict:
    task = env_id.removeprefix("SafetyDoggo").split("-")[0].rstrip("012")
    return {"Circle": DoggoCircleScene, "Run": DoggoRunScene}.get(task, DoggoScene)(env_id).spaces()


def doggo_ids() -> list[str]:
    tasks = [f"{t}{level}" for t in ("Goal", "Button", "Push", "Circle", "FadingEasy", "FadingHard") for level in (0, 1, 2)]
    return [f"SafetyDoggo{t}-v0" for t in [*tasks, "Run0"]]


def main() -> None:
    out = header()
    for env_id in doggo_ids():
        out["tasks"][env_id] = rounded(space_records(env_id))
        print(env_id, "spaces recorded", file=sys.stderr)
    out["tasks"]["SafetyDoggoGoal1-v0"] = rounded(doggo_goal_records("SafetyDoggoGoal1-v0"))
    out["tasks"]["SafetyDoggoGoal2-v0"] = rounded({**out["tasks"]["SafetyDoggoGoal2-v0"],
                                                   **doggo_vase_records("SafetyDoggoGoal2-v0")})
    print("states and rollout recorded", file=sys.stderr)
    write(OUT, out)


if __name__ == "__main__":
    main()
