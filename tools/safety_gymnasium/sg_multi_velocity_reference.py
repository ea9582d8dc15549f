"""Records Safety-Gymnasium 1.0.0's Safe Multi-Agent MuJoCo velocity tasks (``make_ma``) on hand-set
states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md),
from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_multi_velocity_reference.py   # writes tests/data/safety_multi_velocity_reference.json

For each (scenario, agent_conf) crax serves it records the agents, their spaces, the global state's
size, and:

- ``states``: hand-set states (``qpos``, ``qvel`` written with the single-agent env's ``set_state``,
  which runs ``mj_forward``; velocities large enough that Hopper's ±10 clip acts), the other arrays the
  observations read (``qfrc_actuator``, ``cinert``, ``cvel``, ``cfrc_ext``), every agent's observation and
  the global state;
- ``rollouts``: from a hand-set state whose root moves forward (``forward``) or backward (``backward``)
  at twice the threshold, fixed pseudo-random per-agent actions through ``step``: every agent's reward,
  cost, termination and observation after each step.

Nothing is random but the states and actions, drawn from seeded generators and stored.
"""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import safety_gymnasium

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_multi_velocity_reference.json"
PAIRS = (("HalfCheetah", "2x3"), ("HalfCheetah", "6x1"), ("Ant", "2x4"), ("Ant", "2x4d"), ("Ant", "4x2"),
         ("Hopper", "3x1"), ("Swimmer", "2x1"), ("Walker2d", "2x3"), ("Humanoid", "9|8"))
NO_ROLLOUTS = ("Humanoid",)
"""Scenarios recorded on states only (a Humanoid rollout's 248 + 176 numbers a step; its physics is checked by
the single-agent tests)."""
STATES = 3
STEPS = 10


def g(x) -> list:
    """Floats to 9 significant digits (float32 is compared; this keeps the JSON small)."""
    return [float(f"{v:.9g}") for v in np.asarray(x, float).ravel()]


def box(space) -> dict:
    return {"shape": list(space.shape), "dtype": str(space.dtype), "low": g(space.low), "high": g(space.high)}


def record(scenario: str, conf: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2x4d's missing threshold
        env = safety_gymnasium.make_ma(scenario, conf)
    ma = env.env
    base = ma.single_agent_env.unwrapped
    agents = list(ma.possible_agents)
    env.reset(seed=0)
    rng = np.random.default_rng(sum(map(ord, scenario + conf)))
    threshold = float(env.__dict__["_velocity_threshold"])

    def hand_set(scale: float) -> tuple[np.ndarray, np.ndarray]:
        qpos = base.init_qpos + rng.uniform(-0.3, 0.3, base.model.nq)
        qvel = rng.normal(0.0, scale, base.model.nv)
        return qpos, qvel

    states = []
    for i in range(STATES):
        qpos, qvel = hand_set(4.0 * (i + 1))
        base.set_state(qpos, qvel)
        obs = ma._get_obs()
        # the state as set: mj_forward normalizes a free joint's quaternion in qpos
        bodies = {name: g(getattr(base.data, name)) for name in ("qfrc_actuator", "cinert", "cvel", "cfrc_ext")}
        states.append({"qpos": g(base.data.qpos), "qvel": g(base.data.qvel), **bodies, "obs": {a: g(obs[a]) for a in agents},
                       "global_state": g(ma.state())})

    rollouts = {}
    for name, sign in (("forward", 1.0), ("backward", -1.0)) if scenario not in NO_ROLLOUTS else ():
        env.reset(seed=1)
        qpos, qvel = base.init_qpos.copy(), np.zeros(base.model.nv)
        qvel[0] = sign * 2.0 * threshold
        base.set_state(qpos, qvel)
        actions = {a: rng.uniform(-1.0, 1.0, (STEPS, ma.action_space(a).shape[0])) for a in agents}
        steps = []
        for t in range(STEPS):
            obs, rewards, costs, terminated, truncated, _ = env.step({a: actions[a][t].astype(np.float32) for a in agents})
            steps.append({"obs": {a: g(obs[a]) for a in agents}, "reward": g([rewards[a] for a in agents]),
                          "cost": g([costs[a] for a in agents]),
                          "terminated": [bool(terminated[a]) for a in agents]})
            if any(terminated.values()):
                break
        rollouts[name] = {"qpos": g(qpos), "qvel": g(qvel), "actions": {a: g(actions[a]) for a in agents},
                          "steps": steps}

    return {"agents": agents, "threshold": threshold,
            "observation_spaces": {a: box(ma.observation_space(a)) for a in agents},
            "action_spaces": {a: box(ma.action_space(a)) for a in agents},
            "state_size": int(ma.state().shape[0]), "nq": int(base.model.nq), "nv": int(base.model.nv),
            "states": states, "rollouts": rollouts}


def main() -> None:
    data = {"safety_gymnasium": safety_gymnasium.__version__, "steps": STEPS,
            "tasks": {f"{scenario} {conf}": record(scenario, conf) for scenario, conf in PAIRS}}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")))
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
