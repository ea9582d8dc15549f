"""Records Safety-Gymnasium 1.0.0's Racecar on hand-set states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md
says how to make it), from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_reference_racecar.py   # writes tests/data/safety_gym_racecar_reference.json

The scenes are ``sg_reference.py``'s (the agent, the goal, hazards and vases set by hand
after a reset, then ``mj_forward``). The Racecar is set and recorded by its whole joint state
(:class:`RacecarAgent`: qpos 12, the root's position and quaternion, then the left steering hinge,
left front wheel, right steering hinge, right front wheel and the rear axle; qvel 11; the two
controls, in Safety-Gymnasium's units: the axle's target speed in ±20 rad/s and the steering
angle in ±0.785 rad). It records:

- ``spaces``: for every Racecar id crax serves (Goal, Button, Push, Circle 0-2, Run 0,
  FadingEasy/FadingHard 0-2), the observation and action spaces, the observation keys, the
  episode length and the control step;
- ``tasks["SafetyRacecarGoal1-v0"]``: states (resting, rolling with its servos driven, steered at
  full lock, tilted and spinning in the air; hazards and vases; a vase pressed into the bumper)
  with their observation and raw and indicator costs, and one rollout (``drive``: 40 steps of
  fixed actions that drive, steer both ways to full lock and brake) with each step's observation,
  reward, cost and the agent's qpos; and ``wheel_strikes_vase`` (30 steps driving the left front
  wheel into the vase: each step's vase position, agent pose, wheel–vase contacts and cost). Their
  actions are recorded in crax's units (``actions``, in [-1, 1]) and were given to
  Safety-Gymnasium times the actuators' ranges (20, 0.785).
- ``model``: the compiled agent as Safety-Gymnasium builds it (MuJoCo 2.3.3): each body's mass,
  centre of mass and inertia tensor (in the body's frame), position and orientation; the joints'
  axes, ranges and damping; the actuators' gains, biases and ranges; the joint equality; the
  timestep, integrator and control step;
- ``self_contact``: the same drive with the front wheels' contact with the bumper box switched off
  (Safety-Gymnasium's front wheel cylinders touch the bumper at full lock; crax's agent geoms never
  touch each other): the agent's qpos per step, and on which steps that contact is present in the
  recorded drive.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

import mujoco
import numpy as np
import safety_gymnasium
from sg_reference import Scene, euler_quat, header, rounded, turned, write  # a sibling script

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_racecar_reference.json"
NQ, NV = 12, 11
"""The Racecar's joint state: a free joint and five hinges."""
SCALE = np.array([20.0, 0.785])
"""Safety-Gymnasium's action of crax's action ±1 (the actuators' ``ctrlrange``)."""
START = [0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
"""The Racecar's qpos at a reset at the origin facing +x."""
IDS = ([f"SafetyRacecar{task}{level}-v0" for task in ("Goal", "Button", "Push", "Circle") for level in (0, 1, 2)]
       + ["SafetyRacecarRun0-v0"]
       + [f"SafetyRacecarFading{kind}{level}-v0" for kind in ("Easy", "Hard") for level in (0, 1, 2)])
"""Every Racecar id crax serves."""


class RacecarAgent:
    """Mixin for a scene of Safety-Gymnasium's Racecar: its state is written and recorded whole."""

    task: Any
    builder: Any

    def write_agent(self, d, agent: dict) -> dict:
        start = {"qpos": [float(v) for v in agent["qpos"]], "qvel": [float(v) for v in agent.get("qvel", [0.0] * NV)],
                 "ctrl": [float(v) for v in agent.get("ctrl", [0.0] * 2)]}
        d.qpos[:NQ], d.qvel[:NV], d.ctrl[:] = start["qpos"], start["qvel"], start["ctrl"]
        return start

    def agent_state(self) -> dict:
        d = self.task.data
        mat = d.body("agent").xmat.reshape(3, 3)
        return {"xy": d.body("agent").xpos[:2].tolist(), "z": float(d.body("agent").xpos[2]),
                "yaw": float(np.arctan2(mat[1, 0], mat[0, 0])), "qpos": d.qpos[:NQ].tolist(), "qvel": d.qvel[:NV].tolist()}

    def state(self) -> dict:
        d = self.task.data
        return {"qpos": d.qpos[:NQ].tolist(), "qvel": d.qvel[:NV].tolist(), "ctrl": d.ctrl[:].tolist()}

    def driven(self, start: dict, action, steps: int) -> dict:
        """The Racecar's state after ``steps`` control steps of ``action`` (crax's units) from ``start``."""
        self.set(start, {})  # type: ignore[attr-defined]
        for _ in range(steps):
            self.task.simulation_forward(np.asarray(action, float) * SCALE)
        return self.state()


class RacecarScene(RacecarAgent, Scene):
    """A Goal env on the Racecar, set by hand."""


def drive(n: int = 40) -> np.ndarray:
    """Fixed actions (crax's units) that drive forward steering left, then at full right lock, then brake."""
    return np.concatenate([np.tile([[1.0, 0.5]], (15, 1)), np.tile([[1.0, -1.0]], (15, 1)),
                           np.tile([[-0.5, 0.0]], (n - 30, 1))])


def bumper_wheel_contacts(s: RacecarScene) -> list[int]:
    """Contacts now between a front wheel's cylinder and the bumper box."""
    m, d = s.task.model, s.task.data
    wheels = {m.body("left_front_wheel").id, m.body("right_front_wheel").id}
    bumper = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("pos_change").id and m.geom_contype[g]]
    return [i for i in range(d.ncon) if {int(m.geom_bodyid[d.contact[i].geom1]), int(m.geom_bodyid[d.contact[i].geom2])}
            & wheels and {int(d.contact[i].geom1), int(d.contact[i].geom2)} & set(bumper)]


def wheel_vase_contacts(s: RacecarScene) -> int:
    """Contacts now between a wheel's cylinder and the vase."""
    m, d = s.task.model, s.task.data
    vase = m.body("vase0").id
    wheels = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CYLINDER and m.geom_contype[g]
              and m.body_rootid[m.geom_bodyid[g]] == m.body("agent").id]
    return sum(1 for i in range(d.ncon) if {int(d.contact[i].geom1), int(d.contact[i].geom2)} & set(wheels)
               and vase in (m.geom_bodyid[d.contact[i].geom1], m.geom_bodyid[d.contact[i].geom2]))


def record_drive(s: RacecarScene, start: dict, layout: dict, actions: np.ndarray) -> dict:
    """The ``drive`` rollout: Safety-Gymnasium's step of each action times :data:`SCALE`."""
    first = s.set(start, layout)
    steps = []
    for a in actions:
        obs, reward, cost, _, _, info = s.builder.step(np.asarray(a, float) * SCALE)
        steps.append({"obs": obs.tolist(), "reward": float(reward), "cost": float(cost),
                      "goal_met": bool(info.get("goal_met", False)), "self_contact": len(bumper_wheel_contacts(s)),
                      "vase": s.task.data.body("vase0").xpos[:2].tolist(), "wheel_vase": wheel_vase_contacts(s),
                      **s.agent_state()})
    return {"name": "drive", **first, "actions": np.asarray(actions, float).tolist(), "steps": steps}


def without_self_contact(s: RacecarScene, start: dict, layout: dict, actions: np.ndarray) -> list[list[float]]:
    """The agent's qpos per step of the same drive with the front wheels' contact with the bumper
    off: the bumper and the world's other collidable geoms are moved to a second collision bit."""
    s.set(start, layout)  # a reset builds the model anew: change this one
    m = s.task.model
    bumper = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("pos_change").id and m.geom_contype[g]]
    agent = {b for b in range(m.nbody) if m.body_rootid[b] == m.body("agent").id}
    others = [g for g in range(m.ngeom) if m.geom_contype[g] and m.geom_bodyid[g] not in agent]
    m.geom_contype[bumper] = m.geom_conaffinity[bumper] = 2  # touches what has bit 2: the world, not the wheels
    m.geom_conaffinity[others] = 3
    out = []
    for a in actions:
        s.builder.step(np.asarray(a, float) * SCALE)
        assert not bumper_wheel_contacts(s)
        out.append(s.task.data.qpos[:NQ].tolist())
    return out


def model_records(s: RacecarScene) -> dict:
    """The compiled agent's dynamics parameters (:data:`NQ`, :data:`NV` and its bodies in model order)."""
    m = s.task.model
    bodies = [b for b in range(m.nbody) if m.body_rootid[b] == m.body("agent").id]

    def tensor(b):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, m.body_iquat[b])
        rot = rot.reshape(3, 3)
        return (rot @ np.diag(m.body_inertia[b]) @ rot.T).tolist()

    joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] in bodies]
    return {"body_mass": m.body_mass[bodies].tolist(), "body_com": m.body_ipos[bodies].tolist(),
            "body_inertia": [tensor(b) for b in bodies], "body_pos": m.body_pos[bodies].tolist(),
            "body_quat": m.body_quat[bodies].tolist(), "jnt_type": m.jnt_type[joints].tolist(),
            "jnt_axis": m.jnt_axis[joints].tolist(), "jnt_range": m.jnt_range[joints].tolist(),
            "jnt_limited": m.jnt_limited[joints].tolist(), "dof_damping": m.dof_damping[:NV].tolist(),
            "dof_armature": m.dof_armature[:NV].tolist(), "actuator_gainprm": m.actuator_gainprm[:, :3].tolist(),
            "actuator_biasprm": m.actuator_biasprm[:, :3].tolist(), "actuator_ctrlrange": m.actuator_ctrlrange.tolist(),
            "actuator_forcerange": m.actuator_forcerange.tolist(), "actuator_trnid": m.jnt_qposadr[m.actuator_trnid[:, 0]].tolist(),
            "eq_type": m.eq_type.tolist(), "eq_data": m.eq_data[:, :5].tolist(), "eq_solref": m.eq_solref.tolist(),
            "timestep": m.opt.timestep, "integrator": int(m.opt.integrator), "frame_skip": s.task.sim_conf.frameskip_binom_n}


def spaces(env_id: str) -> dict:
    env = safety_gymnasium.make(env_id)
    b = env.unwrapped
    b.reset(seed=0)

    def box(space):
        return {"shape": list(space.shape), "dtype": str(space.dtype),
                "low": np.asarray(space.low, float).tolist(), "high": np.asarray(space.high, float).tolist()}

    keys = [[k, int(np.prod(sp.shape))] for k, sp in b.obs_space_dict.spaces.items()]
    return {"observation_space": box(env.observation_space), "action_space": box(env.action_space), "obs_keys": keys,
            "num_steps": b.task.num_steps, "dt": b.task.model.opt.timestep * b.task.sim_conf.frameskip_binom_n}


def goal1_records() -> dict:
    s = RacecarScene("SafetyRacecarGoal1-v0")
    rest = s.driven({"qpos": START}, [0.0, 0.0], 10)
    rolling = s.driven(rest, [1.0, 0.3], 15)
    lock = s.driven(rest, [0.6, -1.0], 12)
    rng = np.random.default_rng(7)
    steer = 0.4
    tilted = {"qpos": [0.0, 0.0, 0.3, *euler_quat(2.0, -0.3, 0.4), steer, -1.9, steer, 0.8, 2.5],
              "qvel": rng.uniform(-1.5, 1.5, NV).tolist(), "ctrl": [7.0, -0.3]}
    hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
    states = [s.record_state(name, agent, layout) for name, agent, layout in [
        ("goal_ahead", turned(rest, [0.1, -0.2], 0.7), {"goal": [[1.2, 0.4]]}),
        ("rolling_driven", turned(rolling, [-0.3, 0.5], -2.5), {"goal": [[-1.0, -1.1]]}),
        ("full_lock", turned(lock, [0.2, 0.1], 1.3), {"goal": [[1.0 * np.cos(np.pi / 8), 1.0 * np.sin(np.pi / 8)]]}),
        ("tilted_moving", tilted, {"goal": [[0.9, -0.7]]}),
        ("hazards_outside", turned(rest, [0.0, 0.0], 0.3), {"goal": [[1.0, 1.0]], "hazards": hz}),
        ("hazard_inside_edge", turned(rest, [0.45, 0.3], 1.0), {"goal": [[1.0, 1.0]], "hazards": hz}),
        ("hazard_inside_centre", turned(rest, [0.62, 0.31], -1.0), {"goal": [[-1.0, 1.0]], "hazards": hz}),
        ("vases_seen", turned(rest, [0.0, 0.0], -0.4), {"goal": [[1.0, 1.0]], "vases": [[0.7, -0.4, 0.3]]}),
        # 3 mm into the bumper's front face (x = 0.2465 from the root, resting on the floor)
        ("vase_against_bumper", rest, {"goal": [[1.0, 1.0]], "vases": [[0.3435, 0.0, 0.0]]}),
    ]]
    layout = {"goal": [[1.6, 1.2]], "hazards": [[0.9, 0.5], [-0.6, -0.8]]}
    start = turned(rest, [0.0, 0.0], 0.2)
    actions = drive()
    rollout = record_drive(s, start, layout, actions)
    # the left front wheel's outer half (y 0.1 to 0.145 from the root) drives into the vase's face at y 0.1
    strike = record_drive(s, rest, {"goal": [[-1.5, -1.5]], "vases": [[0.4, 0.2, 0.0]]}, np.tile([[0.5, 0.0]], (30, 1)))
    for step in strike["steps"]:
        del step["obs"]
    strike["name"] = "wheel_strikes_vase"
    return {"records": rounded({"states": states, "rollouts": [rollout, strike]}), "model": model_records(s),
            "self_contact": rounded({"qpos": without_self_contact(s, start, layout, actions),
                                     "steps": [i for i, st in enumerate(rollout["steps"]) if st["self_contact"]]})}


def main() -> None:
    out = header()
    out["spaces"] = {}
    for env_id in IDS:
        out["spaces"][env_id] = spaces(env_id)
        print(env_id, "spaces recorded", file=sys.stderr)
    goal1 = goal1_records()
    out["tasks"]["SafetyRacecarGoal1-v0"] = {**out["spaces"]["SafetyRacecarGoal1-v0"], **goal1["records"]}
    out["model"] = goal1["model"]
    out["self_contact"] = goal1["self_contact"]
    write(OUT, out)


if __name__ == "__main__":
    main()
