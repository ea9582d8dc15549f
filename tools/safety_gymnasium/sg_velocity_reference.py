"""Records Safety-Gymnasium 1.0.0's Velocity-v1 tasks on hand-set states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md),
from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_velocity_reference.py   # writes tests/data/safety_velocity_reference.json

For each of the six ``Safety{Agent}Velocity-v1`` ids it records the spaces, ``dt``, the episode
length, the velocity threshold, a few arrays of the agent's compiled model, and:

- ``states``: hand-set states (``qpos``, ``qvel`` written with ``set_state``, which runs
  ``mj_forward``) and Safety-Gymnasium's observation of each;
- ``rollouts``: from a hand-set state, fixed pseudo-random actions through ``env.step``: reward,
  cost, terminated, the velocity the cost reads (``x_velocity``, or the planar speed for Ant and
  Humanoid) and the observation after each step (Humanoid: every ``OBS_EVERY`` steps, to keep the
  file small). ``slow`` starts near rest; ``fast`` starts with a forward velocity of twice the
  threshold, so that the cost is 1 on the first steps.

Nothing is random but the actions, drawn once from a seeded generator and stored.
"""

from __future__ import annotations

import json
import pathlib
import sys

import mujoco
import numpy as np
import safety_gymnasium

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_velocity_reference.json"
AGENTS = ("Ant", "HalfCheetah", "Hopper", "Humanoid", "Swimmer", "Walker2d")
STEPS = 20
OBS_EVERY = {"Humanoid": 5}
PLANAR_SPEED = ("Ant", "Humanoid")


def g(x) -> list:
    """Floats to 9 significant digits (float32 is compared; this keeps the JSON small)."""
    return [float(f"{v:.9g}") for v in np.asarray(x, float).ravel()]


def box(space) -> dict:
    return {"shape": list(space.shape), "dtype": str(space.dtype), "low": g(space.low), "high": g(space.high)}


class Scene:
    def __init__(self, agent: str, version: str = "v1"):
        self.agent = agent
        self.env = safety_gymnasium.make(f"Safety{agent}Velocity-{version}")
        self.base = self.env.unwrapped
        self.env.reset(seed=0)
        self.rng = np.random.default_rng(sum(map(ord, agent)))

    def model(self) -> dict:
        m = self.base.model
        return {"body_mass": g(m.body_mass[1:]), "body_inertia": g(m.body_inertia[1:]), "body_pos": g(m.body_pos[1:]),
                "dof_armature": g(m.dof_armature), "dof_damping": g(m.dof_damping), "jnt_range": g(m.jnt_range),
                "jnt_stiffness": g(m.jnt_stiffness), "actuator_gear": g(m.actuator_gear[:, 0]),
                "geom_size": g(m.geom_size[1:]), "geom_friction": g(m.geom_friction[1:]),
                "timestep": float(m.opt.timestep), "integrator": int(m.opt.integrator), "qpos0": g(m.qpos0)}

    def state(self, fast: bool) -> tuple[np.ndarray, np.ndarray]:
        m = self.base.model
        qpos = m.qpos0 + self.rng.uniform(-0.05, 0.05, m.nq)
        qvel = self.rng.uniform(-0.2, 0.2, m.nv)
        if m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[3:7] /= np.linalg.norm(qpos[3:7])
        if fast:
            qvel[0] = 2.0 * self.base._velocity_threshold
        return qpos, qvel

    def set(self, qpos, qvel) -> np.ndarray:
        self.env.reset(seed=0)
        self.base.set_state(qpos, qvel)
        return self.base._get_obs()

    def record_state(self, name: str, fast: bool) -> dict:
        qpos, qvel = self.state(fast)
        return {"name": name, "qpos": g(qpos), "qvel": g(qvel), "obs": g(self.set(qpos, qvel))}

    def record_rollout(self, name: str, fast: bool) -> dict:
        qpos, qvel = self.state(fast)
        self.set(qpos, qvel)
        space = self.env.action_space
        actions = self.rng.uniform(space.low, space.high, (STEPS, *space.shape)).astype(np.float32)
        every = OBS_EVERY.get(self.agent, 1)
        steps = []
        for t, a in enumerate(actions):
            obs, reward, cost, terminated, truncated, info = self.env.step(a)
            vx, vy = info["x_velocity"], info.get("y_velocity", 0.0)
            row = {"reward": float(reward), "cost": float(cost), "terminated": bool(terminated),
                   "velocity": float(np.hypot(vx, vy) if self.agent in PLANAR_SPEED else vx), "x_velocity": float(vx)}
            if (t + 1) % every == 0:
                row["obs"] = g(obs)
            steps.append(row)
            if terminated:
                break
        return {"name": name, "qpos": g(qpos), "qvel": g(qvel), "actions": [g(a) for a in actions[: len(steps)]],
                "steps": steps}

    def record(self) -> dict:
        spec = self.env.spec
        return {"observation_space": box(self.env.observation_space), "action_space": box(self.env.action_space),
                "dt": float(self.base.dt), "max_episode_steps": spec.max_episode_steps,
                "velocity_threshold": float(self.base._velocity_threshold), "model": self.model(),
                "states": [self.record_state("near_rest", False), self.record_state("fast", True)],
                "rollouts": [self.record_rollout("slow", False), self.record_rollout("fast", True)]}


def main() -> None:
    import importlib.metadata as md

    out = {"safety_gymnasium": md.version("safety-gymnasium"), "gymnasium": md.version("gymnasium"),
           "mujoco": mujoco.__version__, "python": sys.version.split()[0], "tasks": {}}
    for agent in AGENTS:
        out["tasks"][f"Safety{agent}Velocity-v1"] = Scene(agent).record()
        print(agent, "recorded", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, separators=(",", ":")))
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
