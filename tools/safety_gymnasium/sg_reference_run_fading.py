"""Records Safety-Gymnasium 1.0.0's Run and Fading tasks on hand-set states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md
says how to make it), from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_reference_run_fading.py   # writes tests/data/safety_gym_run_fading_reference.json

The scenes are ``sg_reference.py``'s (the agent, the goal, hazards and vases set by hand
after a reset, then ``mj_forward``). For each id it records the spaces and the task's definition.

- **Run** (``SafetyPointRun0-v0``, ``SafetyCarRun0-v0``, ``SafetyAntRun0-v0``): the agent's start
  placement and keepout, the sigwalls, the floor, the reward factor and far point; states inside
  and beyond each sigwall (observation, raw and indicator costs); on the Point, rollouts down and
  up the corridor (rewards) and across a sigwall (cost per step), and a dynamics rollout.
- **Fading** (``Safety{Point,Car,Ant}Fading{Easy,Hard}{0,1,2}-v0``): the fading steps and the
  object classes that fade, with their full alphas; on the Point, a rollout of FadingEasy0 through
  the goal (the goal's alpha each step, and again after it respawns) and one of FadingHard2 through
  a hazard into a vase (the goal's, the hazards' and the vases' alphas each step, reward and costs).
  Their observations and costs are the Goal task's, which ``sg_reference.py`` records.
"""

from __future__ import annotations

import pathlib
import sys

import mujoco
import numpy as np
from sg_reference import (  # a sibling: Python puts this script's folder on sys.path
    AntAgent,
    CarAgent,
    CircleScene,
    Scene,
    ant_gait,
    car_drive,
    header,
    rounded,
    turned,
    write,
)

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_run_fading_reference.json"


class RunScene(CircleScene):
    """A Run env: only the agent is set; the reward's potential is taken where it now stands."""

    def set(self, agent: dict, layout: dict) -> dict:
        start = super().set(agent, layout)
        t = self.task
        t.old_potential = -np.linalg.norm(t.agent.pos[:2] - t.goal_pos) * t.reward_factor
        return start

    def spaces(self) -> dict:
        walls, t = self.task.sigwalls, self.task
        return {**Scene.spaces(self), "agent_placements": [list(p) for p in t.agent.placements],
                "agent_keepout": t.agent.keepout, "floor_size": list(t.floor_conf.size),
                "reward_factor": t.reward_factor, "reward_clip": t.reward_conf.reward_clip,
                "far_point": [float(v) for v in np.ravel(t.goal_pos)],
                "sigwalls": {"num": walls.num, "locate_factor": walls.locate_factor, "size": walls.size,
                             "is_constrained": walls.is_constrained}}


class CarRunScene(CarAgent, RunScene):
    """Run on the Car."""


class AntRunScene(AntAgent, RunScene):
    """Run on the Ant."""


def run_records(env_id: str) -> dict:
    agent = env_id.removeprefix("Safety").split("Run")[0]
    if agent == "Point":
        s = RunScene(env_id)

        def pose(xy, yaw, qvel=(0.0, 0.0, 0.0)):
            return {"xy": list(xy), "yaw": yaw, "qvel": list(qvel)}
    elif agent == "Car":
        s = CarRunScene(env_id)
        rest = s.settled()

        def pose(xy, yaw, qvel=None):
            return turned(rest, xy, yaw)
    else:
        s = AntRunScene(env_id)
        stand = s.settled()

        def pose(xy, yaw, qvel=None):
            return turned(stand, xy, yaw)
    states = [s.record_state(name, pose(xy, yaw), {}) for name, xy, yaw in [
        ("start", [0.1, 16.5], 0.3),
        ("just_inside_x_plus", [0.49, 10.0], -1.2),
        ("beyond_x_plus", [0.51, 5.0], 2.0),
        ("beyond_x_minus", [-0.8, -3.0], -2.5),
        ("far_down", [0.2, -15.0], np.pi),
        ("beyond_the_floor", [0.0, -19.0], 1.0),
    ]]
    rollouts = []
    if agent == "Point":
        rollouts += [s.record_rollout(name, pose(xy, yaw, qvel), {}, np.tile([action], (n, 1))) for name, xy, yaw, qvel, action, n in [
            ("run_down", [0.0, 16.5], -np.pi / 2, (0.0, 0.0, 0.0), [1.0, 0.0], 30),
            ("run_up", [0.1, 12.0], np.pi / 2, (0.0, 0.3, 0.0), [1.0, 0.1], 20),
            ("cross_x_plus", [0.4, 12.0], 0.0, (0.8, 0.0, 0.0), [1.0, 0.0], 12),
            ("cross_x_minus", [-0.3, 2.0], np.pi, (-0.8, 0.0, 0.0), [1.0, -0.2], 12),
        ]]
        t = np.arange(100)
        actions = np.stack([0.8 * np.sin(t / 9.0) + 0.2, np.cos(t / 13.0)], axis=-1)
        rollouts.append(s.record_rollout("dynamics", pose([0.0, 16.5], -np.pi / 2), {}, actions))
    elif agent == "Car":
        rollouts.append(s.record_rollout("drive", pose([0.0, 16.5], 0.0), {}, car_drive(30)))
    else:
        rollouts.append(s.record_rollout("walk", pose([0.0, 16.5], -np.pi / 2), {}, ant_gait(30)))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})


def alphas(s: Scene) -> dict[str, float]:
    """The alpha each fading object class is drawn with now (its first geom's: a class fades as one)."""
    m, out = s.task.model, {}
    for obj in s.task.fadding_objects:
        name = obj.name if not hasattr(obj, "num") else obj.name[:-1] + "0"
        out[obj.name] = float(m.geom_rgba[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, name)][3])
    return out


def fading_rollout(s: Scene, name: str, agent: dict, layout: dict, actions: np.ndarray) -> dict:
    """A rollout with every step's alphas; the task's fading state reset as a reset leaves it."""
    start = s.set(agent, layout)
    s.task.specific_reset()
    first = alphas(s)
    steps = []
    for a in actions:
        _, reward, cost, terminated, _, info = s.builder.step(np.asarray(a, float))
        steps.append({"reward": float(reward), "cost": float(cost), "goal_met": bool(info.get("goal_met", False)),
                      "cost_info": {k: float(v) for k, v in info.items() if k.startswith("cost")},
                      "alpha": alphas(s), **s.agent_state()})
        if terminated:
            break
    return {"name": name, **start, "alpha0": first, "actions": np.asarray(actions, float).tolist(), "steps": steps}


def fading_records(env_id: str) -> dict:
    s = Scene(env_id)
    t = s.task
    record = {**s.spaces(), "fading_steps": t.fadding_steps, "fading": [o.name for o in t.fadding_objects],
              "full_alpha": {o.name: float(o.alpha) for o in t.fadding_objects}}
    if env_id == "SafetyPointFadingEasy0-v0":
        record["rollouts"] = [fading_rollout(s, "through_the_goal", {"xy": [0.0, 0.0], "yaw": 0.0},
                                             {"goal": [[0.6, 0.0]]}, np.tile([[1.0, 0.0]], (40, 1)))]
    elif env_id == "SafetyPointFadingHard2-v0":
        record["rollouts"] = [fading_rollout(s, "through_a_hazard_into_a_vase", {"xy": [0.0, 0.0], "yaw": 0.0},
                                             {"goal": [[-1.5, 1.5]], "hazards": [[0.5, 0.0]], "vases": [[1.1, 0.0, 0.0]]},
                                             np.tile([[1.0, 0.0]], (90, 1)))]
    return rounded(record)


def main() -> None:
    out = header()
    for agent in ("Point", "Car", "Ant"):
        env_id = f"Safety{agent}Run0-v0"
        out["tasks"][env_id] = run_records(env_id)
        print(env_id, "recorded", file=sys.stderr)
        for kind in ("Easy", "Hard"):
            for level in (0, 1, 2):
                env_id = f"Safety{agent}Fading{kind}{level}-v0"
                out["tasks"][env_id] = fading_records(env_id)
                print(env_id, "recorded", file=sys.stderr)
    write(OUT, out)


if __name__ == "__main__":
    main()
