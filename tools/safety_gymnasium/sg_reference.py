"""Records Safety-Gymnasium 1.0.0's own numbers on hand-set states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md
says how to make it), from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_reference.py            # writes tests/data/safety_gym_reference.json

For each served Goal, Circle, Push and Button id (the Point's and the Ant's) it records the
spaces, the flattened observation's keys and sizes, and:

- ``states``: hand-set states (agent pose and velocity, every object's position; vases with a
  yaw), each after ``mj_forward``: the flattened observation, the raw cost terms
  (``task.calculate_cost()``), the indicator terms and step cost as ``env.step`` reports them;
- ``rollouts``: from a hand-set state, a fixed action sequence through ``env.step``: reward, cost,
  cost terms (indicators), ``goal_met``, and after each step the agent's pose and velocity and the
  observation; used for reward terms (progress, goal reached), vase costs over time, and the
  dynamics comparison (the long ``dynamics`` rollout).

States are set after a reset: the agent starts at the origin facing +x (so its slide joints are
world x and y), then ``qpos``/``qvel`` of the agent and the vases and the bodies' ``pos`` of the
goal and hazards are written and ``mj_forward`` runs. Objects a state does not use are parked far
away (beyond every lidar's range). Nothing here is random except Safety-Gymnasium's own goal
respawn, after which a rollout records no observation (see ``goal_respawn``).

Push (:class:`PushScene`) also sets the pillars' ``pos`` and the push box's free joint (x, y, yaw,
at rest on the floor) and records Safety-Gymnasium's 3-D agent–box and box–goal distances, at the
start and after each step with the box's pose, from which its reward terms are differences.

Button (:class:`ButtonScene`) sets the buttons, the goal button, the button timer and the
gremlins (each a free box welded to a mocap body), records the goal button, timer, time and the
gremlins' poses after each step, and rounds its numbers to 9 significant digits (:func:`rounded`).

The Ant (:class:`AntAgent`, mixed into each scene) is set and recorded by its whole joint state:
qpos (root position and quaternion, 8 hinge angles), qvel and the 8 controls; its states are built
from its reset pose (in the air, falling), a standing pose (that pose after 1 s of zero action,
moved and turned on the floor), a tilted, spinning pose in the air, and lying on its back (dead).
Each rollout step also records its height, qpos, qvel and whether it is alive; a rollout stops
where it dies, as Safety-Gymnasium's episode does. Its records are rounded as Button's. On Button
(:class:`AntButtonScene`) a button is pressed 3 mm into a foot (:meth:`AntButtonScene.sphere_against`)
and the Ant, flying at 2 m/s, strikes one 1 cm deep.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

import mujoco
import numpy as np
import safety_gymnasium

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "safety_gym_reference.json"
FAR = 20.0


def far(n: int, row: int) -> list[list[float]]:
    return [[FAR + 1.5 * i, FAR + 3.0 * row] for i in range(n)]


class Scene:
    """One Safety-Gymnasium env whose state is set by hand."""

    def __init__(self, env_id: str):
        self.env_id = env_id
        self.env = safety_gymnasium.make(env_id)
        self.builder = self.env.unwrapped
        self.task = self.builder.task
        self.task.agent.locations = [(0.0, 0.0)]
        self.task.agent.rot = 0.0
        self.builder.reset(seed=0)
        self.counts = {"hazards": getattr(getattr(self.task, "hazards", None), "num", 0),
                       "vases": getattr(getattr(self.task, "vases", None), "num", 0)}

    def spaces(self) -> dict:
        def box(space):
            return {"shape": list(space.shape), "dtype": str(space.dtype),
                    "low": np.asarray(space.low, float).tolist(), "high": np.asarray(space.high, float).tolist()}

        keys = [[k, int(np.prod(s.shape))] for k, s in self.builder.obs_space_dict.spaces.items()]
        return {"observation_space": box(self.env.observation_space), "action_space": box(self.env.action_space),
                "obs_keys": keys, "num_steps": self.task.num_steps,
                "dt": self.task.model.opt.timestep * self.task.sim_conf.frameskip_binom_n,
                "extents": list(self.task.placements_conf.extents), "counts": self.counts}

    def set(self, agent: dict, layout: dict) -> dict:
        """Resets, writes the state and returns it completed (every object placed)."""
        self.builder.reset(seed=0)
        m, d = self.task.model, self.task.data
        full = {"goal": layout.get("goal", far(1, 0)),
                "hazards": (layout.get("hazards", []) + far(self.counts["hazards"], 1))[: self.counts["hazards"]],
                "vases": (layout.get("vases", []) + [[*p, 0.0] for p in far(self.counts["vases"], 2)])[: self.counts["vases"]]}
        m.body("goal").pos[:2] = full["goal"][0]
        for i, xy in enumerate(full["hazards"]):
            m.body(f"hazard{i}").pos[:2] = xy
        for i, (x, y, yaw) in enumerate(full["vases"]):
            adr = m.jnt_qposadr[m.joint(f"vase{i}").id]
            d.qpos[adr: adr + 7] = [x, y, 0.1 - 4e-5, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
            vadr = m.jnt_dofadr[m.joint(f"vase{i}").id]
            d.qvel[vadr: vadr + 6] = 0.0
        start = self.write_agent(d, agent)
        mujoco.mj_forward(m, d)
        self.task.world_info.layout = None  # rebuilt from the bodies by update_layout
        self.task.world_info.layout = {"agent": d.body("agent").xpos[:2].copy(),
                                       "goal": d.body("goal").xpos[:2].copy(),
                                       **{f"hazard{i}": d.body(f"hazard{i}").xpos[:2].copy() for i in range(self.counts["hazards"])},
                                       **{f"vase{i}": d.body(f"vase{i}").xpos[:2].copy() for i in range(self.counts["vases"])}}
        self.task.random_generator.layout = self.task.world_info.layout
        self.task.last_dist_goal = self.task.dist_goal()
        return {"agent": start, "layout": full}

    def write_agent(self, d, agent: dict) -> dict:
        """Writes the agent's state into ``d`` and returns it as recorded: the Point's x, y, yaw
        (its slide and hinge joints), their velocities and its two controls."""
        start = {"xy": list(agent["xy"]), "yaw": agent.get("yaw", 0.0), "qvel": list(agent.get("qvel", [0.0] * 3)),
                 "ctrl": list(agent.get("ctrl", [0.0, 0.0]))}
        d.qpos[:3] = [*start["xy"], start["yaw"]]
        d.qvel[:3] = start["qvel"]
        d.ctrl[:] = start["ctrl"]
        return start

    def agent_state(self) -> dict:
        d = self.task.data
        return {"xy": d.body("agent").xpos[:2].tolist(), "yaw": float(d.qpos[2]), "qvel": d.qvel[:3].tolist()}

    def record_state(self, name: str, agent: dict, layout: dict) -> dict:
        start = self.set(agent, layout)
        raw = {k: float(v) for k, v in self.task.calculate_cost().items()}
        indicator = {k: float(v) for k, v in self.builder._cost().items()}
        return {"name": name, **start, "obs": self.task.obs().tolist(), "cost_raw": raw, "cost_info": indicator}

    def record_rollout(self, name: str, agent: dict, layout: dict, actions: np.ndarray) -> dict:
        start = self.set(agent, layout)
        steps = []
        respawned = False
        for a in actions:
            obs, reward, cost, terminated, truncated, info = self.builder.step(np.asarray(a, float))
            met = bool(info.get("goal_met", False))
            row = {"reward": float(reward), "cost": float(cost), "goal_met": met,
                   "cost_info": {k: float(v) for k, v in info.items() if k.startswith("cost")},
                   "cost_raw": {k: float(v) for k, v in self.task.calculate_cost().items()},
                   **self.agent_state()}
            if not respawned and not met:
                row["obs"] = obs.tolist()
            respawned |= met
            steps.append(row)
            if terminated:  # the Ant died (Safety-Gymnasium's episode ends)
                break
        return {"name": name, **start, "actions": np.asarray(actions, float).tolist(), "steps": steps,
                "goal_respawn": respawned}


def goal_records(env_id: str) -> dict:
    s = Scene(env_id)
    level = int(env_id.split("-")[0][-1])
    states, rollouts = [], []
    states.append(s.record_state("goal_ahead", {"xy": [0.1, -0.2], "yaw": 0.7}, {"goal": [[1.2, 0.4]]}))
    states.append(s.record_state("goal_behind_moving", {"xy": [-0.3, 0.5], "yaw": -2.5, "qvel": [0.3, -0.2, 1.5],
                                                        "ctrl": [0.5, -0.4]}, {"goal": [[-1.0, -1.1]]}))
    states.append(s.record_state("goal_at_bin_edge", {"xy": [0.0, 0.0], "yaw": 0.0},
                                 {"goal": [[1.0 * np.cos(np.pi / 8), 1.0 * np.sin(np.pi / 8)]]}))
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        states.append(s.record_state("hazards_outside", {"xy": [0.0, 0.0], "yaw": 0.3}, {"goal": [[1.0, 1.0]], "hazards": hz}))
        states.append(s.record_state("hazard_inside_edge", {"xy": [0.45, 0.3], "yaw": 1.0}, {"goal": [[1.0, 1.0]], "hazards": hz}))
        states.append(s.record_state("hazard_inside_centre", {"xy": [0.62, 0.31], "yaw": -1.0}, {"goal": [[-1.0, 1.0]], "hazards": hz}))
        states.append(s.record_state("two_hazards_inside", {"xy": [0.0, 0.0], "yaw": 2.0},
                                     {"goal": [[-1.0, 1.0]], "hazards": [[0.1, 0.05], [-0.08, -0.1]]}))
        vases = [[0.7, -0.4, 0.3], [-0.9, -0.2, 1.2]][: s.counts["vases"]]
        states.append(s.record_state("vases_seen", {"xy": [0.0, 0.0], "yaw": -0.4}, {"goal": [[1.0, 1.0]], "vases": vases}))
        states.append(s.record_state("vase_touching", {"xy": [0.0, 0.0], "yaw": 0.0},
                                     {"goal": [[1.0, 1.0]], "vases": [[0.0, 0.197, 0.0]]}))
        push = np.tile([[1.0, 0.0]], (15, 1))
        rollouts.append(s.record_rollout("vase_pushed", {"xy": [0.0, 0.0], "yaw": np.pi / 2},
                                         {"goal": [[1.5, -1.5]], "vases": [[0.0, 0.28, 0.4]]}, push))
    rollouts.append(s.record_rollout("approach_goal", {"xy": [0.0, 0.0], "yaw": 0.0},
                                     {"goal": [[0.9, 0.0]]}, np.tile([[1.0, 0.0]], (10, 1))))
    rollouts.append(s.record_rollout("reach_goal", {"xy": [0.0, 0.0], "yaw": 0.0, "qvel": [0.5, 0.0, 0.0]},
                                     {"goal": [[0.32, 0.0]]}, np.tile([[1.0, 0.0]], (3, 1))))
    t = np.arange(150)
    actions = np.stack([0.8 * np.sin(t / 9.0), np.cos(t / 13.0)], axis=-1)
    rollouts.append(s.record_rollout("dynamics", {"xy": [0.0, 0.0], "yaw": 0.0},
                                     {"goal": [[-1.6, 1.4]], "hazards": [[2.0, -1.5], [0.9, 1.2]]}, actions))
    return {**s.spaces(), "states": states, "rollouts": rollouts}


class CircleScene(Scene):
    """A Circle env: only the agent is set (the circle and the sigwalls stand where the task puts them)."""

    def set(self, agent: dict, layout: dict) -> dict:
        self.builder.reset(seed=0)
        m, d = self.task.model, self.task.data
        start = self.write_agent(d, agent)
        mujoco.mj_forward(m, d)
        return {"agent": start, "layout": {}}

    def spaces(self) -> dict:
        walls = getattr(self.task, "sigwalls", None)
        return {**super().spaces(), "agent_placements": [list(p) for p in self.task.agent.placements],
                "agent_keepout": self.task.agent.keepout, "circle_radius": self.task.circle.radius,
                "lidar_max_dist": self.task.lidar_conf.max_dist,
                "sigwalls": None if walls is None else {"num": walls.num, "locate_factor": walls.locate_factor,
                                                        "is_constrained": walls.is_constrained}}


def circle_records(env_id: str) -> dict:
    """States inside and beyond each sigwall, on and off the circle's radius, near and beyond the
    lidar's range; one-step rollouts for the reward (velocity along, against and across the circle,
    on, inside and outside its radius); 12-step rollouts across the sigwalls; a dynamics rollout.
    The same cases at every level (level 0 has no cost term)."""
    s = CircleScene(env_id)
    diagonal = 1.5 / np.sqrt(2)  # on the radius, inside level 2's walls
    states = [s.record_state(name, agent, {}) for name, agent in [
        ("inside_at_rest", {"xy": [0.3, -0.4], "yaw": 0.5}),
        ("inside_moving", {"xy": [-0.6, 0.7], "yaw": 2.0, "qvel": [0.4, -0.3, 1.2], "ctrl": [0.6, -0.5]}),
        ("on_radius", {"xy": [diagonal, diagonal], "yaw": 3 * np.pi / 4, "qvel": [-0.3, 0.3, 0.0]}),
        ("just_inside_x_plus", {"xy": [1.12, 0.5], "yaw": -1.0}),
        ("beyond_x_plus", {"xy": [1.13, 0.5], "yaw": -1.0}),
        ("beyond_x_minus", {"xy": [-1.4, -0.2], "yaw": 3.0}),
        ("just_inside_y_minus", {"xy": [0.0, -1.12], "yaw": 0.2}),
        ("beyond_y_plus", {"xy": [0.4, 1.3], "yaw": 1.2}),
        ("beyond_y_minus", {"xy": [-0.3, -1.2], "yaw": -2.2, "qvel": [0.1, -0.5, 0.0]}),
        ("beyond_corner", {"xy": [1.5, -1.5], "yaw": 0.9}),
        ("far_in_lidar_range", {"xy": [3.0, 2.5], "yaw": -0.6}),
        ("beyond_lidar_range", {"xy": [4.5, -4.2], "yaw": 1.7}),
    ]]
    # one step each: the reward of a step from a set pose and velocity (on, inside and outside the
    # radius; along, against and across the circle), before the turn servo's chatter sets in
    rollouts = [s.record_rollout(name, agent, {}, np.asarray([action])) for name, agent, action in [
        ("reward_along_on_radius", {"xy": [diagonal, diagonal], "yaw": 3 * np.pi / 4, "qvel": [-0.35, 0.35, 0.0]}, [1.0, 0.0]),
        ("reward_against_on_radius", {"xy": [diagonal, -diagonal], "yaw": 3 * np.pi / 4, "qvel": [-0.4, -0.4, 0.3]}, [0.5, 0.3]),
        ("reward_along_inside", {"xy": [0.4, 0.3], "yaw": 2.2, "qvel": [-0.3, 0.4, 0.2]}, [0.2, -0.6]),
        ("reward_outside", {"xy": [2.0, -0.5], "yaw": 1.4, "qvel": [0.1, 0.6, -0.3]}, [-0.5, 0.5]),
        ("reward_radial", {"xy": [0.6, 0.8], "yaw": 0.93, "qvel": [0.3, 0.4, 0.0]}, [0.0, 0.0]),
        ("reward_near_origin", {"xy": [0.05, -0.02], "yaw": -0.3, "qvel": [0.2, 0.3, 0.0]}, [0.3, 0.0]),
        ("reward_spinning", {"xy": [-0.7, -0.9], "yaw": 1.0, "qvel": [0.5, -0.2, 2.0], "ctrl": [0.4, 0.4]}, [1.0, 1.0]),
        ("reward_far_corner", {"xy": [-1.8, 1.9], "yaw": -2.4, "qvel": [-0.4, -0.4, 0.0]}, [-1.0, 0.0]),
    ]]
    # across the sigwalls: the cost per step as the agent leaves (orbit_on_radius leaves across y = 1.125)
    rollouts += [s.record_rollout(name, agent, {}, np.tile([action], (12, 1))) for name, agent, action in [
        ("orbit_on_radius", {"xy": [diagonal, diagonal], "yaw": 3 * np.pi / 4, "qvel": [-0.35, 0.35, 0.0]}, [1.0, 0.0]),
        ("cross_x_plus", {"xy": [0.95, 0.2], "yaw": 0.0, "qvel": [0.8, 0.0, 0.0]}, [1.0, 0.0]),
        ("cross_x_minus", {"xy": [-0.95, -0.4], "yaw": np.pi, "qvel": [-0.8, 0.0, 0.0]}, [1.0, 0.2]),
        ("cross_y_minus", {"xy": [0.3, -0.95], "yaw": -np.pi / 2, "qvel": [0.0, -0.8, 0.0]}, [1.0, -0.1]),
    ]]
    t = np.arange(150)
    actions = np.stack([0.8 * np.sin(t / 9.0), np.cos(t / 13.0)], axis=-1)
    rollouts.append(s.record_rollout("dynamics", {"xy": [0.5, 0.0], "yaw": np.pi / 2}, {}, actions))
    return {**s.spaces(), "states": states, "rollouts": rollouts}


class PushScene(Scene):
    """A Push env set by hand: also its pillars (bodies ``pillar<i>``, parked in row 3) and the
    push box (free joint ``push_box``: x, y, yaw; resting at z = its size, as Safety-Gymnasium
    starts it; parked in row 4 when a state leaves it out), and the task's last distances."""

    def __init__(self, env_id: str):
        super().__init__(env_id)
        self.counts["pillars"] = getattr(getattr(self.task, "pillars", None), "num", 0)
        self.counts["push_box"] = 1

    def set(self, agent: dict, layout: dict) -> dict:
        start = super().set(agent, layout)
        m, d = self.task.model, self.task.data
        full = {**start["layout"],
                "pillars": (layout.get("pillars", []) + far(self.counts["pillars"], 3))[: self.counts["pillars"]],
                "push_box": layout.get("push_box", [[*far(1, 4)[0], 0.0]])}
        del full["vases"]
        for i, xy in enumerate(full["pillars"]):
            m.body(f"pillar{i}").pos[:2] = xy
        x, y, yaw = full["push_box"][0]
        adr, vadr = m.jnt_qposadr[m.joint("push_box").id], m.jnt_dofadr[m.joint("push_box").id]
        d.qpos[adr: adr + 7] = [x, y, self.task.push_box.size, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        d.qvel[vadr: vadr + 6] = 0.0
        mujoco.mj_forward(m, d)
        layout_now = self.task.world_info.layout
        layout_now.update({f"pillar{i}": d.body(f"pillar{i}").xpos[:2].copy() for i in range(self.counts["pillars"])})
        layout_now["push_box"] = d.body("push_box").xpos[:2].copy()
        self.task.last_dist_goal = self.task.dist_goal()
        self.task.last_dist_box = self.task.dist_box()
        self.task.last_box_goal = self.task.dist_box_goal()
        return {**start, "layout": full, "dist_box": float(self.task.last_dist_box),
                "dist_box_goal": float(self.task.last_box_goal)}

    def agent_state(self) -> dict:
        """The agent's state, the box's pose (centre, quaternion) and Safety-Gymnasium's distances
        agent–box and box–goal (3-D, between body origins) that its reward differences."""
        d = self.task.data
        return {**super().agent_state(), "box_pos": d.body("push_box").xpos.tolist(),
                "box_quat": d.body("push_box").xquat.tolist(), "dist_box": float(self.task.dist_box()),
                "dist_box_goal": float(self.task.dist_box_goal())}


def push_records(env_id: str) -> dict:
    """Push's spaces, the box's mass and inertia, states and rollouts. Rollouts are recorded where
    the tests step the env: level 0 (pushing the box into the goal; the dynamics rollout) and
    level 2 (hazard and pillar costs over time, the box stopped by a pillar)."""
    s = PushScene(env_id)
    level = int(env_id.split("-")[0][-1])
    states, rollouts = [], []
    states.append(s.record_state("box_and_goal", {"xy": [0.1, -0.2], "yaw": 0.7},
                                 {"goal": [[-0.7, 0.6]], "push_box": [[0.8, 0.5, 0.3]]}))
    states.append(s.record_state("moving_agent", {"xy": [-0.3, 0.5], "yaw": -2.5, "qvel": [0.3, -0.2, 1.5],
                                                  "ctrl": [0.5, -0.4]},
                                 {"goal": [[1.0, -1.1]], "push_box": [[-1.0, -0.4, 2.0]]}))
    states.append(s.record_state("box_at_bin_edge", {"xy": [0.0, 0.0], "yaw": 0.0},
                                 {"goal": [[-1.0, -0.5]], "push_box": [[np.cos(np.pi / 8), np.sin(np.pi / 8), 1.0]]}))
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        pl = [[0.9, -0.6], [-0.8, -0.9], [0.2, 1.3], [-1.4, 0.4]]
        box = [[-0.2, -0.9, 0.5]]
        states.append(s.record_state("hazards_and_pillars_seen", {"xy": [0.0, 0.0], "yaw": 0.3},
                                     {"goal": [[1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}))
        states.append(s.record_state("hazard_inside_edge", {"xy": [0.35, 0.3], "yaw": 1.0},
                                     {"goal": [[1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}))
        states.append(s.record_state("hazard_inside_centre", {"xy": [0.62, 0.31], "yaw": -1.0},
                                     {"goal": [[-1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}))
        states.append(s.record_state("two_hazards_inside", {"xy": [0.0, 0.0], "yaw": 2.0},
                                     {"goal": [[-1.0, 1.0]], "hazards": [[0.1, 0.05], [-0.08, -0.1]]}))
        states.append(s.record_state("box_in_hazard", {"xy": [0.0, -0.35], "yaw": 0.0},
                                     {"goal": [[-1.0, 1.0]], "hazards": [[0.6, 0.3]], "push_box": [[0.6, 0.3, 0.2]]}))
        states.append(s.record_state("pillar_touch_front", {"xy": [0.0, 0.0], "yaw": 0.0},
                                     {"goal": [[-1.0, 1.0]], "pillars": [[0.34, 0.0]]}))
        states.append(s.record_state("pillar_touch_sphere", {"xy": [0.0, 0.0], "yaw": np.pi / 2},
                                     {"goal": [[-1.0, 1.0]], "pillars": [[0.29, 0.0]]}))
        states.append(s.record_state("pillar_touch_sphere_and_front", {"xy": [0.0, 0.0], "yaw": 0.0},
                                     {"goal": [[-1.0, 1.0]], "pillars": [[0.12, -0.235]]}))
    if level >= 2:
        states.append(s.record_state("two_pillars_touched", {"xy": [0.0, 0.0], "yaw": np.pi / 2},
                                     {"goal": [[-1.0, 1.0]], "pillars": [[0.29, 0.0], [-0.29, 0.0]]}))
        push = np.tile([[1.0, 0.0]], (50, 1))
        rollouts.append(s.record_rollout("push_through_hazard", {"xy": [0.0, 0.0], "yaw": 0.0},
                                         {"goal": [[-1.2, 1.2]], "hazards": [[0.75, 0.0]], "push_box": [[0.5, 0.0, 0.0]]},
                                         push))
        rollouts.append(s.record_rollout("pillar_bump", {"xy": [0.0, 0.0], "yaw": 0.0},
                                         {"goal": [[-1.2, 1.2]], "pillars": [[0.45, 0.0]]}, push[:25]))
        rollouts.append(s.record_rollout("box_against_pillar", {"xy": [0.0, 0.0], "yaw": 0.0},
                                         {"goal": [[-1.2, 1.2]], "pillars": [[1.05, 0.05]],
                                          "push_box": [[0.5, 0.0, 0.0]]}, push[:40]))
    if level == 0:
        rollouts.append(s.record_rollout("push_to_goal", {"xy": [0.0, 0.0], "yaw": 0.0},
                                         {"goal": [[1.05, 0.0]], "push_box": [[0.5, 0.0, 0.0]]},
                                         np.tile([[1.0, 0.0]], (40, 1))))
        t = np.arange(150)
        actions = np.stack([0.8 * np.sin(t / 9.0), np.cos(t / 13.0)], axis=-1)
        rollouts.append(s.record_rollout("dynamics", {"xy": [0.0, 0.0], "yaw": 0.0},
                                         {"goal": [[-1.6, 1.4]], "push_box": [[0.6, 0.35, 0.5]]}, actions))
    box = s.task.model.body("push_box")
    return {**s.spaces(), "box": {"mass": float(box.mass[0]), "inertia": box.inertia.tolist()},
            "states": states, "rollouts": rollouts}


def rounded(x):
    """``x`` with every float to 9 significant digits (the Button records: a third of the size)."""
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x


def yaw_quat(yaw: float) -> list[float]:
    return [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]


class ButtonScene(Scene):
    """A Button env whose state is set by hand: buttons, the goal button, hazards, gremlins, timer.

    Safety-Gymnasium builds each gremlin as a free box welded to a mocap body at the origin, the
    weld's relative pose being the box's layout pose (``eq_data[3:10]``); a hand-set gremlin
    writes its layout position and yaw there and into the box's free joint, as its own reset
    would have compiled them. Gremlins and buttons a state does not use are parked far away."""

    def __init__(self, env_id: str):
        super().__init__(env_id)
        self.counts = {"buttons": self.task.buttons.num, "hazards": getattr(getattr(self.task, "hazards", None), "num", 0),
                       "gremlins": getattr(getattr(self.task, "gremlins", None), "num", 0)}

    def set(self, agent: dict, layout: dict, goal_button: int = 0, timer: int = 0) -> dict:
        self.builder.reset(seed=0)
        m, d, n = self.task.model, self.task.data, self.counts
        full = {"buttons": (layout.get("buttons", []) + far(n["buttons"], 0))[: n["buttons"]],
                "hazards": (layout.get("hazards", []) + far(n["hazards"], 1))[: n["hazards"]],
                "gremlins": (layout.get("gremlins", []) + [[*p, 0.0] for p in far(n["gremlins"], 2)])[: n["gremlins"]]}
        for i, xy in enumerate(full["buttons"]):
            m.body(f"button{i}").pos[:2] = xy
        self.task.buttons.goal_button = goal_button
        m.body("goal").pos[:2] = full["buttons"][goal_button]
        for i, xy in enumerate(full["hazards"]):
            m.body(f"hazard{i}").pos[:2] = xy
        for i, (x, y, yaw) in enumerate(full["gremlins"]):
            eq = m.equality(f"gremlin{i}mocap").id
            m.eq_data[eq, 3:10] = [x, y, 0.1, *yaw_quat(yaw)]
            m.geom(f"gremlin{i}mocap").pos[:] = [x, y, 0.1]
            m.geom(f"gremlin{i}mocap").quat[:] = yaw_quat(yaw)
            adr = m.jnt_qposadr[m.joint(f"gremlin{i}obj").id]
            d.qpos[adr: adr + 7] = [x, y, 0.1, *yaw_quat(yaw)]
            vadr = m.jnt_dofadr[m.joint(f"gremlin{i}obj").id]
            d.qvel[vadr: vadr + 6] = 0.0
            d.mocap_pos[m.body(f"gremlin{i}mocap").mocapid[0]] = 0.0
        start = self.write_agent(d, agent)
        d.time = 0.0
        self.task.buttons.timer = timer
        mujoco.mj_forward(m, d)
        self.task.world_info.layout = {"agent": d.body("agent").xpos[:2].copy(), "goal": d.body("goal").xpos[:2].copy(),
                                       **{f"button{i}": d.body(f"button{i}").xpos[:2].copy() for i in range(n["buttons"])},
                                       **{f"hazard{i}": d.body(f"hazard{i}").xpos[:2].copy() for i in range(n["hazards"])},
                                       **{f"gremlin{i}": np.asarray(full["gremlins"][i][:2]) for i in range(n["gremlins"])}}
        self.task.random_generator.layout = self.task.world_info.layout
        self.task.last_dist_goal = self.task.dist_goal()
        return {"agent": start, "layout": full, "goal_button": goal_button, "timer": timer}

    def record_state(self, name: str, agent: dict, layout: dict, goal_button: int = 0, timer: int = 0) -> dict:
        start = self.set(agent, layout, goal_button, timer)
        raw = {k: float(v) for k, v in self.task.calculate_cost().items()}
        indicator = {k: float(v) for k, v in self.builder._cost().items()}
        return {"name": name, **start, "obs": self.task.obs().tolist(), "cost_raw": raw, "cost_info": indicator}

    def record_rollout(self, name: str, agent: dict, layout: dict, actions: np.ndarray, goal_button: int = 0) -> dict:
        """Each step also records the goal button and timer after it (a press draws the next goal
        button at random), the simulation time and each gremlin's box position and mocap position."""
        start = self.set(agent, layout, goal_button)
        m, d = self.task.model, self.task.data
        steps = []
        for a in actions:
            obs, reward, cost, terminated, truncated, info = self.builder.step(np.asarray(a, float))
            gremlins = range(self.counts["gremlins"])
            steps.append({"reward": float(reward), "cost": float(cost), "goal_met": bool(info.get("goal_met", False)),
                          "cost_info": {k: float(v) for k, v in info.items() if k.startswith("cost")},
                          "cost_raw": {k: float(v) for k, v in self.task.calculate_cost().items()},
                          "goal_button": int(self.task.buttons.goal_button), "timer": int(self.task.buttons.timer),
                          "time": float(d.time), "obs": obs.tolist(),
                          "gremlins": [d.body(f"gremlin{i}obj").xpos.tolist() for i in gremlins],
                          "gremlins_mocap": [d.mocap_pos[m.body(f"gremlin{i}mocap").mocapid[0]].tolist() for i in gremlins],
                          **self.agent_state()})
            if terminated:  # the Ant died (Safety-Gymnasium's episode ends)
                break
        return {"name": name, **start, "actions": np.asarray(actions, float).tolist(), "steps": steps}


def button_records(env_id: str) -> dict:
    s = ButtonScene(env_id)
    level = int(env_id.split("-")[0][-1])
    states, rollouts = [], []
    buttons = [[0.9, 0.3], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]
    states.append(s.record_state("buttons_seen", {"xy": [0.1, -0.2], "yaw": 0.7}, {"buttons": buttons}, goal_button=1))
    states.append(s.record_state("buttons_moving", {"xy": [-0.3, 0.5], "yaw": -2.5, "qvel": [0.3, -0.2, 1.5],
                                                    "ctrl": [0.5, -0.4]}, {"buttons": buttons}, goal_button=3))
    edge = [[1.0 * np.cos(np.pi / 8), 1.0 * np.sin(np.pi / 8)], *buttons[1:]]
    states.append(s.record_state("button_at_bin_edge", {"xy": [0.0, 0.0]}, {"buttons": edge}, goal_button=0))
    states.append(s.record_state("timer_running", {"xy": [0.1, -0.2], "yaw": 0.7}, {"buttons": buttons}, goal_button=1,
                                 timer=4))
    touch = [[0.24, 0.0], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]  # the agent's front box presses button 0
    states.append(s.record_state("touching_goal_button", {"xy": [0.0, 0.0]}, {"buttons": touch}, goal_button=0))
    states.append(s.record_state("touching_wrong_button", {"xy": [0.0, 0.0]}, {"buttons": touch}, goal_button=2))
    states.append(s.record_state("touching_wrong_button_timer", {"xy": [0.0, 0.0]}, {"buttons": touch}, goal_button=2,
                                 timer=3))
    two = [[0.24, 0.0], [-0.19, 0.0], [-0.7, -0.9], [1.1, -1.2]]  # the sphere touches button 1 as well
    states.append(s.record_state("touching_two_wrong_buttons", {"xy": [0.0, 0.0]}, {"buttons": two}, goal_button=3))
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        states.append(s.record_state("hazard_inside_edge", {"xy": [0.45, 0.3], "yaw": 1.0}, {"buttons": buttons, "hazards": hz}))
        states.append(s.record_state("two_hazards_inside", {"xy": [0.0, 0.0], "yaw": 2.0},
                                     {"buttons": buttons, "hazards": [[0.1, 0.05], [-0.08, -0.1]]}))
        gr = [[0.8, -0.5, 0.3], [-0.9, -0.2, 1.2], [0.2, 1.1, 2.0], [-1.2, 1.3, 0.0]]
        states.append(s.record_state("gremlins_seen", {"xy": [0.0, 0.0], "yaw": -0.4}, {"buttons": buttons, "gremlins": gr}))
        states.append(s.record_state("touching_gremlin", {"xy": [0.0, 0.0], "yaw": np.pi / 2},
                                     {"buttons": buttons, "gremlins": [[0.0, -0.195, 0.0]]}))
        states.append(s.record_state("gremlin_at_front_box", {"xy": [0.0, 0.0], "yaw": 0.0},
                                     {"buttons": buttons, "gremlins": [[0.24, 0.02, 0.4]]}))
        circling = [[0.7, 0.2, 0.3], [-0.6, -0.7, 1.0], [0.1, 1.0, 2.5], [-1.1, 0.6, 4.0]]
        rollouts.append(s.record_rollout("gremlins_circle", {"xy": [0.0, -0.2], "yaw": 0.0},
                                         {"buttons": [[1.3, -1.3]], "gremlins": circling}, np.zeros((60, 2))))
        rollouts.append(s.record_rollout("gremlin_sweeps_agent", {"xy": [0.45, 0.0], "yaw": 0.0},
                                         {"buttons": [[1.3, -1.3]], "gremlins": [[0.0, 0.0, 0.0]]}, np.zeros((90, 2))))
    press = [[0.45, 0.0], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]
    rollouts.append(s.record_rollout("press_goal_button", {"xy": [0.0, 0.0], "yaw": 0.0}, {"buttons": press},
                                     np.tile([[1.0, 0.0]], (36, 1)), goal_button=0))
    rollouts.append(s.record_rollout("press_wrong_button", {"xy": [0.0, 0.0], "yaw": 0.0}, {"buttons": press},
                                     np.tile([[1.0, 0.0]], (26, 1)), goal_button=1))
    t = np.arange(150)
    actions = np.stack([0.8 * np.sin(t / 9.0), np.cos(t / 13.0)], axis=-1)
    layout = {"buttons": [[-1.6, 1.4], [1.2, 1.5], [-1.5, -1.6], [1.8, -1.0]], "hazards": [[2.0, -1.5], [0.9, 1.2]],
              "gremlins": [[-1.4, -0.4, 0.5], [1.7, 0.3, 1.0]]}
    rollouts.append(s.record_rollout("dynamics", {"xy": [0.0, 0.0], "yaw": 0.0}, layout, actions, goal_button=0))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})


ANT_POSE = [0.0, np.pi / 2, 0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, np.pi / 2]
"""The Ant's hinge angles a reset draws about (``agents/ant.py``: hips 0, ankles ±π/2)."""


def quat_mul(a, b) -> np.ndarray:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def euler_quat(yaw: float, pitch: float = 0.0, roll: float = 0.0) -> np.ndarray:
    """The quaternion of turning by ``roll`` about x, then ``pitch`` about y, then ``yaw`` about z."""
    qz = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    qy = [np.cos(pitch / 2), 0.0, np.sin(pitch / 2), 0.0]
    qx = [np.cos(roll / 2), np.sin(roll / 2), 0.0, 0.0]
    return quat_mul(qz, quat_mul(qy, qx))


def ant_qpos(xy, z: float = 0.18, yaw: float = 0.0, pitch: float = 0.0, roll: float = 0.0, hinges=ANT_POSE) -> list:
    """The Ant's qpos: root at (x, y, z) turned by (roll, pitch, yaw), then its 8 hinge angles."""
    return [float(v) for v in [*xy, z, *euler_quat(yaw, pitch, roll), *hinges]]


def turned(state: dict, xy, yaw: float) -> dict:
    """An Ant state (qpos, qvel, ctrl) moved to ``xy`` and turned by ``yaw`` about the vertical
    (a state resting on the flat floor stays at rest)."""
    qpos, qvel = np.array(state["qpos"]), np.array(state["qvel"])
    c, s = np.cos(yaw), np.sin(yaw)
    qpos[:2] = xy
    qpos[3:7] = quat_mul([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)], qpos[3:7])
    qvel[:2] = [c * qvel[0] - s * qvel[1], s * qvel[0] + c * qvel[1]]  # the root's world velocity; its spin is local
    return {**state, "qpos": qpos.tolist(), "qvel": qvel.tolist()}


class WholeStateAgent:
    """Mixin for a scene whose agent's state is written and recorded whole: the first ``nq`` entries of
    qpos, ``nv`` of qvel and the ``nu`` controls; each rollout step also records the agent body's height
    and heading. A subclass gives the sizes and :meth:`start_qpos`."""

    task: Any
    nq: int
    nv: int
    nu: int

    def start_qpos(self) -> list[float]:
        """The agent's qpos at the origin, facing +x, as Safety-Gymnasium builds it."""
        raise NotImplementedError

    def write_agent(self, d, agent: dict) -> dict:
        start = {"qpos": [float(v) for v in agent["qpos"]],
                 "qvel": [float(v) for v in agent.get("qvel", [0.0] * self.nv)],
                 "ctrl": [float(v) for v in agent.get("ctrl", [0.0] * self.nu)]}
        d.qpos[:self.nq], d.qvel[:self.nv], d.ctrl[:] = start["qpos"], start["qvel"], start["ctrl"]
        return start

    def agent_state(self) -> dict:
        """The scene's own record (Push: the box and the distances) with the agent's state in place
        of the Point's."""
        d = self.task.data
        mat = d.body("agent").xmat.reshape(3, 3)
        return {**super().agent_state(), "xy": d.body("agent").xpos[:2].tolist(),  # type: ignore[misc]
                "z": float(d.body("agent").xpos[2]), "yaw": float(np.arctan2(mat[1, 0], mat[0, 0])),
                "qpos": d.qpos[:self.nq].tolist(), "qvel": d.qvel[:self.nv].tolist()}

    def settled(self, steps: int = 10) -> dict:
        """The agent's state after ``steps`` control steps of zero action from :meth:`start_qpos`."""
        self.set({"qpos": self.start_qpos()}, {})  # type: ignore[attr-defined]
        for _ in range(steps):
            self.task.simulation_forward(np.zeros(self.nu))
        d = self.task.data
        return {"qpos": d.qpos[:self.nq].tolist(), "qvel": d.qvel[:self.nv].tolist(), "ctrl": [0.0] * self.nu}


class AntAgent(WholeStateAgent):
    """Mixin for a scene of Safety-Gymnasium's navigation Ant (qpos 15: root position, quaternion, 8 hinge
    angles; qvel 14; ctrl 8); each rollout step also records whether the Ant is alive. Settled
    (:meth:`~WholeStateAgent.settled`, from its reset pose with no noise), it stands on its four feet."""

    nq, nv, nu = 15, 14, 8

    def start_qpos(self) -> list[float]:
        return ant_qpos([0.0, 0.0])

    def agent_state(self) -> dict:
        return {**super().agent_state(), "alive": bool(self.task.agent.is_alive())}

    def pressed_against(self, state: dict, geom: str, depth: float, *, reach: float = 0.02) -> tuple[list[float], float]:
        """Where to put an object's centre, and its yaw, so that its side, ``depth`` from its centre
        (a vase's or the box's half-size, a pillar's radius), presses 3 mm into the Ant's capsule
        ``geom`` (a foot) at its outer end, the Ant in ``state``: on the line from the torso through
        that end, ``depth + reach − 3 mm`` beyond it (``reach``: the capsule's radius), facing the Ant."""
        self.set(state, {})  # type: ignore[attr-defined]
        d, m = self.task.data, self.task.model
        g = d.geom(geom)
        tip = g.xpos + g.xmat.reshape(3, 3)[:, 2] * m.geom(geom).size[1]
        out = (tip[:2] - d.body("agent").xpos[:2]) / np.linalg.norm(tip[:2] - d.body("agent").xpos[:2])
        return [float(v) for v in tip[:2] + out * (depth + reach - 0.003)], float(np.arctan2(out[1], out[0]))


class AntScene(AntAgent, Scene):
    """A Goal env on the Ant, set by hand."""


class AntCircleScene(AntAgent, CircleScene):
    """A Circle env on the Ant, set by hand."""


def ant_gait(n: int) -> np.ndarray:
    """A smooth, periodic action sequence for the Ant's 8 motors: sines of period 4·2π steps, a
    motor π/4 behind the one before, 0.3 on the hips and 0.03 on the ankles. From standing it walks
    about 0.9 m in 100 steps with its torso never below 0.1 m (death is at 0.08)."""
    t = np.arange(n)[:, None]
    phase = np.arange(8)[None] * np.pi / 4
    return 0.3 * np.sin(t / 4.0 + phase) * np.where(np.arange(8) % 2, 0.1, 1.0)[None]


def ant_states(s: AntAgent) -> dict[str, dict]:
    """The Ant states the Goal and Circle records start from (names -> qpos, qvel, ctrl)."""
    rng = np.random.default_rng(7)
    lo = np.array([-0.7, 0.52, -0.7, -1.74, -0.7, -1.74, -0.7, 0.52])  # the hinges' ranges
    hinges = rng.uniform(lo, lo + [1.4, 1.22] * 4)
    stand = s.settled()
    return {
        "stand": stand,
        "reset_pose": {"qpos": ant_qpos([0.0, 0.0]), "qvel": [0.0] * 14, "ctrl": [0.0] * 8},
        "tilted_moving": {"qpos": ant_qpos([0.0, 0.0], z=0.3, yaw=2.0, pitch=-0.3, roll=0.4, hinges=hinges),
                          "qvel": rng.uniform(-1.5, 1.5, 14).tolist(), "ctrl": rng.uniform(-1.0, 1.0, 8).tolist()},
        "on_its_back": {"qpos": ant_qpos([0.0, 0.0], z=0.0625, roll=np.pi), "qvel": [0.0] * 14, "ctrl": [0.0] * 8},
    }


HAZARDS = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
"""The hazards of the Ant's and the Car's Goal states (levels 1 and 2)."""


def hazard_states(s: Scene, settled: dict) -> list[dict]:
    """Goal states of the agent ``settled`` (:meth:`WholeStateAgent.settled`), moved and turned: at a hazard's
    inner edge, at its centre and inside two at once, and seeing the vases; the Ant's and the Car's."""
    vases = [[0.7, -0.4, 0.3], [-0.9, -0.2, 1.2]][: s.counts["vases"]]
    return [
        s.record_state("hazard_inside_edge", turned(settled, [0.45, 0.3], 1.0), {"goal": [[1.0, 1.0]], "hazards": HAZARDS}),
        s.record_state("hazard_inside_centre", turned(settled, [0.62, 0.31], -1.0), {"goal": [[-1.0, 1.0]], "hazards": HAZARDS}),
        s.record_state("two_hazards_inside", turned(settled, [0.0, 0.0], 2.0),
                       {"goal": [[-1.0, 1.0]], "hazards": [[0.1, 0.05], [-0.08, -0.1]]}),
        s.record_state("vases_seen", turned(settled, [0.0, 0.0], -0.4), {"goal": [[1.0, 1.0]], "vases": vases}),
    ]


def ant_goal_records(env_id: str) -> dict:
    """The Goal tasks on the Ant: states for every observation key (at rest standing, falling from
    the reset pose, tilted and spinning in the air with controls, on its back), the hazard and
    vase costs, rewards and the goal over short rollouts, death, and a dynamics rollout."""
    s = AntScene(env_id)
    level = int(env_id.split("-")[0][-1])
    ant = ant_states(s)
    stand = ant["stand"]
    states, rollouts = [], []
    states.append(s.record_state("reset_pose_falling", turned(ant["reset_pose"], [0.1, -0.2], 0.7), {"goal": [[1.2, 0.4]]}))
    states.append(s.record_state("standing", turned(stand, [-0.3, 0.5], -2.5), {"goal": [[-1.0, -1.1]]}))
    states.append(s.record_state("tilted_moving", ant["tilted_moving"], {"goal": [[0.9, -0.7]]}))
    states.append(s.record_state("on_its_back", ant["on_its_back"], {"goal": [[-0.4, 1.3]]}))
    if level >= 1:
        states.append(s.record_state("hazards_seen_tilted", ant["tilted_moving"], {"goal": [[1.0, 1.0]], "hazards": HAZARDS}))
        states += hazard_states(s, stand)
        xy, yaw = s.pressed_against(stand, "left_ankle_geom", 0.1)  # a vase 3 mm into the front left foot
        touch = [[*xy, yaw]]
        states.append(s.record_state("vase_touching_foot", stand, {"goal": [[1.0, -1.0]], "vases": touch}))
        rollouts.append(s.record_rollout("vase_kicked", stand, {"goal": [[1.0, -1.0]], "vases": touch},
                                         np.tile([[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], (3, 1))))
    if level != 1:  # the tests step levels 0 and 2 (level 1 differs from 2 in its counts and vase cost)
        rollouts.append(s.record_rollout("reach_goal", stand, {"goal": [[0.25, 0.0]]}, np.zeros((2, 8))))
        rollouts.append(s.record_rollout("dies_on_its_back", ant["on_its_back"], {"goal": [[1.0, 1.0]]},
                                         np.zeros((1, 8))))
        rollouts.append(s.record_rollout("dynamics", stand,
                                         {"goal": [[-1.6, 1.4]], "hazards": [[2.0, -1.5], [0.9, 1.2]]}, ant_gait(100)))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})


SIGWALL_POSES = [
    ("just_inside_x_plus", [1.12, 0.5], -1.0),
    ("beyond_x_plus", [1.13, 0.5], -1.0),
    ("beyond_x_minus", [-1.4, -0.2], 3.0),
    ("just_inside_y_minus", [0.0, -1.12], 0.2),
    ("beyond_y_plus", [0.4, 1.3], 1.2),
    ("beyond_corner", [1.5, -1.5], 0.9),
    ("far_in_lidar_range", [3.0, 2.5], -0.6),
    ("beyond_lidar_range", [4.5, -4.2], 1.7),
]
"""(name, xy, yaw) of the Circle states of a settled agent at each sigwall and at the lidar's range, the
Ant's and the Car's (:func:`ant_circle_records`, :func:`car_circle_records`)."""


def ant_circle_records(env_id: str) -> dict:
    """Circle on the Ant: standing inside, on and beyond each sigwall, in and beyond the lidar's
    range, tilted and moving; one-step rewards from flights through the air (along, against and
    across the circle, on, inside and outside its radius); 5-step flights across the sigwalls;
    a dynamics rollout. The same states at every level; the rollouts at levels 0 and 2."""
    s = AntCircleScene(env_id)
    level = int(env_id.split("-")[0][-1])
    ant = ant_states(s)
    stand, diagonal = ant["stand"], 1.5 / np.sqrt(2)
    states = [s.record_state(name, agent, {}) for name, agent in [
        ("inside_standing", turned(stand, [0.3, -0.4], 0.5)),
        ("tilted_moving", {**ant["tilted_moving"], "qpos": [-0.6, 0.7, *ant["tilted_moving"]["qpos"][2:]]}),
        ("on_radius", turned(stand, [diagonal, diagonal], 3 * np.pi / 4)),
        *((name, turned(stand, xy, yaw)) for name, xy, yaw in SIGWALL_POSES),
    ]]

    def flight(xy, yaw, velocity, spin=(0.0, 0.0, 0.0)) -> dict:
        """The Ant in its reset pose 0.3 m up, its root moving at ``velocity`` (world) and
        spinning at ``spin`` (its own frame)."""
        return {"qpos": ant_qpos(xy, z=0.3, yaw=yaw), "qvel": [*velocity, *spin, *[0.0] * 8]}

    if level == 1:  # the tests step levels 0 and 2 (level 1 differs from 2 in its y walls' absence)
        return rounded({**s.spaces(), "states": states, "rollouts": []})
    rollouts = [s.record_rollout(name, agent, {}, np.asarray([action])) for name, agent, action in [
        ("reward_along_on_radius", flight([diagonal, diagonal], 3 * np.pi / 4, [-0.35, 0.35, 0.0]), np.zeros(8)),
        ("reward_against_on_radius", flight([diagonal, -diagonal], 1.0, [-0.4, -0.4, 0.2], [0.0, 0.0, 1.5]),
         0.5 * np.ones(8)),
        ("reward_along_inside", flight([0.4, 0.3], 2.2, [-0.3, 0.4, 0.0], [0.3, -0.2, 0.0]), np.zeros(8)),
        ("reward_outside", flight([2.0, -0.5], 1.4, [0.1, 0.6, -0.3]), -0.5 * np.ones(8)),
        ("reward_radial", flight([0.6, 0.8], 0.93, [0.3, 0.4, 0.0]), np.zeros(8)),
        ("reward_near_origin", flight([0.05, -0.02], -0.3, [0.2, 0.3, 0.0]), np.zeros(8)),
        ("reward_standing_pushed", {**turned(stand, [-0.7, -0.9], 1.0), "qvel": [0.5, -0.2, *[0.0] * 12]},
         np.zeros(8)),
    ]]
    rollouts += [s.record_rollout(name, agent, {}, np.zeros((5, 8))) for name, agent in [
        ("cross_x_plus", flight([1.0, 0.2], 0.0, [0.8, 0.0, 0.0])),
        ("cross_x_minus", flight([-1.0, -0.4], np.pi, [-0.8, 0.0, 0.0])),
        ("cross_y_minus", flight([0.3, -1.0], -np.pi / 2, [0.0, -0.8, 0.0])),
    ]]
    # it walks from (0.6, −0.3) to about (0.4, 0.5), inside every sigwall
    rollouts.append(s.record_rollout("dynamics", turned(stand, [0.6, -0.3], np.pi), {}, ant_gait(100)))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})


class AntPushScene(AntAgent, PushScene):
    """A Push env on the Ant, set by hand."""


def ant_push_records(env_id: str) -> dict:
    """Push on the Ant: states for every lidar (the box, goal, hazards, pillars; the Ant standing
    and tilted), the box pressed against a foot, the hazard cost (the Ant's centre, not the box's),
    pillars pressed against feet (level 2: their contact cost); one-step rewards of flights at and
    past the box, the box reaching the goal, death, and a walk into the box (level 0)."""
    s = AntPushScene(env_id)
    level = int(env_id.split("-")[0][-1])
    ant = ant_states(s)
    stand = ant["stand"]
    states, rollouts = [], []
    states.append(s.record_state("box_and_goal", turned(stand, [0.1, -0.2], 0.7),
                                 {"goal": [[-0.7, 0.6]], "push_box": [[0.8, 0.5, 0.3]]}))
    states.append(s.record_state("tilted_moving", ant["tilted_moving"],
                                 {"goal": [[1.0, -1.1]], "push_box": [[-1.0, -0.4, 2.0]]}))
    xy, yaw = s.pressed_against(stand, "left_ankle_geom", 0.2)
    states.append(s.record_state("box_against_foot", stand, {"goal": [[-1.0, 1.0]], "push_box": [[*xy, yaw]]}))
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        pl = [[0.9, -0.6], [-0.8, -0.9], [0.2, 1.3], [-1.4, 0.4]]
        box = [[-0.2, -0.9, 0.5]]
        states.append(s.record_state("hazards_and_pillars_seen_tilted", ant["tilted_moving"],
                                     {"goal": [[1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}))
        states.append(s.record_state("hazard_inside_edge", turned(stand, [0.35, 0.3], 1.0),
                                     {"goal": [[1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}))
        states.append(s.record_state("hazard_inside_centre", turned(stand, [0.62, 0.31], -1.0),
                                     {"goal": [[-1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}))
        states.append(s.record_state("box_in_hazard", turned(stand, [0.0, -0.45], 0.0),
                                     {"goal": [[-1.0, 1.0]], "hazards": [[0.6, 0.3]], "push_box": [[0.6, 0.3, 0.2]]}))
        xy, _ = s.pressed_against(stand, "left_ankle_geom", 0.2)
        states.append(s.record_state("pillar_against_foot", stand, {"goal": [[-1.0, 1.0]], "pillars": [xy]}))
    if level >= 2:
        one, _ = s.pressed_against(stand, "left_ankle_geom", 0.2)
        two, _ = s.pressed_against(stand, "third_ankle_geom", 0.2)
        states.append(s.record_state("two_pillars_against_feet", stand, {"goal": [[-1.0, 1.0]], "pillars": [one, two]}))

    def flight(xy, yaw, velocity) -> dict:
        return {"qpos": ant_qpos(xy, z=0.3, yaw=yaw), "qvel": [*velocity, *[0.0] * 11]}

    rollouts.append(s.record_rollout("flight_at_box", flight([0.0, 0.0], 0.0, [0.6, 0.2, 0.0]),
                                     {"goal": [[-1.2, 1.2]], "push_box": [[0.8, 0.4, 0.3]]}, np.zeros((1, 8))))
    rollouts.append(s.record_rollout("flight_past_box", flight([0.1, -0.3], 1.0, [-0.5, 0.4, 0.1]),
                                     {"goal": [[-1.2, 1.2]], "push_box": [[0.8, 0.4, 0.3]]}, np.zeros((1, 8))))
    rollouts.append(s.record_rollout("box_reaches_goal", turned(stand, [-0.8, -0.8], 0.0),
                                     {"goal": [[0.5, 0.0]], "push_box": [[0.25, 0.0, 0.0]]}, np.zeros((2, 8))))
    rollouts.append(s.record_rollout("dies_on_its_back", ant["on_its_back"],
                                     {"goal": [[1.0, 1.0]], "push_box": [[-0.8, 0.6, 0.0]]}, np.zeros((1, 8))))
    if level == 0:  # it walks into the box on its way (Goal's gait)
        rollouts.append(s.record_rollout("dynamics", stand, {"goal": [[-1.6, 1.4]], "push_box": [[0.1, -0.55, 0.3]]},
                                         ant_gait(100)))
    box = s.task.model.body("push_box")
    return rounded({**s.spaces(), "box": {"mass": float(box.mass[0]), "inertia": box.inertia.tolist()},
                    "states": states, "rollouts": rollouts})



class AntButtonScene(AntAgent, ButtonScene):
    """A Button env on the Ant, set by hand."""

    def sphere_against(self, state: dict, geom: str, radius: float, *, height: float | None = None,
                       depth: float = 0.003, reach: float = 0.02) -> list[float]:
        """Where to put a sphere's centre (``radius``, at ``height``: a button's, its radius) so
        that it presses ``depth`` into the Ant's capsule ``geom`` (a foot), the Ant in ``state``:
        on the line from the torso through the capsule's outer end, as far out as leaves the
        sphere ``radius + reach − depth`` from the capsule's axis (bisection on that distance)."""
        height = radius if height is None else height
        self.set(state, {})
        d, m = self.task.data, self.task.model
        g = d.geom(geom)
        axis = g.xmat.reshape(3, 3)[:, 2] * m.geom(geom).size[1]
        a, b = g.xpos - axis, g.xpos + axis
        out = (b[:2] - d.body("agent").xpos[:2]) / np.linalg.norm(b[:2] - d.body("agent").xpos[:2])

        def gap(t: float) -> float:
            c = np.array([*(b[:2] + out * t), height])
            u = np.clip(np.dot(c - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
            return float(np.linalg.norm(c - (a + u * (b - a)))) - (radius + reach - depth)

        lo, hi = -0.1, radius + reach  # gap(lo) < 0 < gap(hi)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
        return [float(v) for v in b[:2] + out * lo]


def ant_button_records(env_id: str) -> dict:
    """Button on the Ant: states for every lidar (buttons, goal, hazards, gremlins; the Ant standing
    and tilted), the timer blanking the buttons lidar, buttons pressed 3 mm into a foot (the goal
    button; a wrong one, with the timer at 0 and running; two wrong ones), hazard costs, gremlins
    pressed into feet; rollouts (levels 0 and 2): a two-step flight that strikes a button 1 cm deep
    (the goal button: a press, the timer's ten steps; a wrong one: its cost), death, a walk among
    the buttons (level 0); the gremlins circling the standing Ant and one sweeping it (level 2)."""
    s = AntButtonScene(env_id)
    level = int(env_id.split("-")[0][-1])
    ant = ant_states(s)
    stand = ant["stand"]
    states, rollouts = [], []
    buttons = [[0.9, 0.3], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]
    states.append(s.record_state("buttons_seen", turned(stand, [0.1, -0.2], 0.7), {"buttons": buttons}, goal_button=1))
    states.append(s.record_state("tilted_moving", ant["tilted_moving"], {"buttons": buttons}, goal_button=3))
    states.append(s.record_state("timer_running", turned(stand, [0.1, -0.2], 0.7), {"buttons": buttons}, goal_button=1,
                                 timer=4))
    one = s.sphere_against(stand, "left_ankle_geom", s.task.buttons.size)  # a button 3 mm into the front left foot
    two = s.sphere_against(stand, "third_ankle_geom", s.task.buttons.size)  # and one into the back left foot
    touch = [one, *buttons[1:]]
    states.append(s.record_state("touching_goal_button", stand, {"buttons": touch}, goal_button=0))
    states.append(s.record_state("touching_wrong_button", stand, {"buttons": touch}, goal_button=2))
    states.append(s.record_state("touching_wrong_button_timer", stand, {"buttons": touch}, goal_button=2, timer=3))
    states.append(s.record_state("touching_two_wrong_buttons", stand, {"buttons": [one, two, *buttons[2:]]},
                                 goal_button=3))
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        gr = [[0.8, -0.5, 0.3], [-0.9, -0.2, 1.2], [0.2, 1.1, 2.0], [-1.2, 1.3, 0.0]]
        states.append(s.record_state("hazards_and_gremlins_seen_tilted", ant["tilted_moving"],
                                     {"buttons": buttons, "hazards": hz, "gremlins": gr}, goal_button=2))
        states.append(s.record_state("hazard_inside_edge", turned(stand, [0.45, 0.3], 1.0),
                                     {"buttons": buttons, "hazards": hz}))
        states.append(s.record_state("hazard_inside_centre", turned(stand, [0.62, 0.31], -1.0),
                                     {"buttons": buttons, "hazards": hz}))
        xy, yaw = s.pressed_against(stand, "left_ankle_geom", 0.1)  # a gremlin's side 3 mm into the front left foot
        states.append(s.record_state("gremlin_against_foot", stand, {"buttons": buttons, "gremlins": [[*xy, yaw]]}))
        xy2, yaw2 = s.pressed_against(stand, "fourth_ankle_geom", 0.1)
        states.append(s.record_state("two_gremlins_against_feet", stand,
                                     {"buttons": buttons, "gremlins": [[*xy, yaw], [*xy2, yaw2]]}))
    if level == 1:  # the tests step levels 0 and 2 (level 1 differs from 2 in its counts)
        return rounded({**s.spaces(), "states": states, "rollouts": rollouts})
    # 0.28 m up in its reset pose at 2 m/s: a foot strikes button 0 (1 cm deep) in the second step; it lands clear
    flight = {"qpos": ant_qpos([0.0, 0.0], z=0.28), "qvel": [2.0, 0.0, *[0.0] * 12]}
    strike = [[0.53, 0.1], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]
    rollouts.append(s.record_rollout("press_goal_button", flight, {"buttons": strike}, np.zeros((14, 8)), goal_button=0))
    rollouts.append(s.record_rollout("press_wrong_button", flight, {"buttons": strike}, np.zeros((14, 8)), goal_button=1))
    rollouts.append(s.record_rollout("dies_on_its_back", ant["on_its_back"], {"buttons": buttons}, np.zeros((1, 8))))
    far_buttons = [[-1.6, 1.4], [1.2, 1.5], [-1.5, -1.6], [1.8, -1.0]]
    if level == 0:
        rollouts.append(s.record_rollout("dynamics", stand, {"buttons": far_buttons}, ant_gait(100)))
    else:
        circling = [[0.7, 0.2, 0.3], [-0.6, -0.7, 1.0], [0.1, 1.0, 2.5], [-1.1, 0.6, 4.0]]
        rollouts.append(s.record_rollout("gremlins_circle", turned(stand, [0.0, -0.2], 0.0),
                                         {"buttons": [[1.3, -1.3]], "gremlins": circling}, np.zeros((60, 8))))
        rollouts.append(s.record_rollout("gremlin_sweeps_agent", turned(stand, [0.45, 0.0], 0.0),
                                         {"buttons": [[1.3, -1.3]], "gremlins": [[0.0, 0.0, 0.0]]}, np.zeros((40, 8))))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})

CAR_QPOS = [0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
"""The Car's qpos as Safety-Gymnasium builds it (chassis 0.1 m up, level; wheels and rear ball at 0)."""


class CarAgent(WholeStateAgent):
    """Mixin for a scene of Safety-Gymnasium's Car (qpos 13: chassis position and quaternion, the two wheel
    angles, the rear ball's quaternion; qvel 11; ctrl 2). Settled (:meth:`~WholeStateAgent.settled`, from
    its start pose, the chassis x axis along +x), it rests on its wheels and ball."""

    nq, nv, nu = 13, 11, 2

    def start_qpos(self) -> list[float]:
        return CAR_QPOS


class CarScene(CarAgent, Scene):
    """A Goal env on the Car, set by hand."""


class CarCircleScene(CarAgent, CircleScene):
    """A Circle env on the Car, set by hand."""


def car_forward(yaw: float, speed: float) -> list[float]:
    """The Car's qvel moving at ``speed`` along its driving direction (its chassis' −y axis) when
    turned by ``yaw``, its wheels and rear ball (radius 0.05) rolling with it."""
    heading, spin = yaw - np.pi / 2, speed / 0.05
    return [speed * np.cos(heading), speed * np.sin(heading), 0.0, 0.0, 0.0, 0.0, spin, spin, spin, 0.0, 0.0]


def car_drive(n: int) -> np.ndarray:
    """A smooth action sequence for the Car's two wheel motors (saturating: a motor's force limit,
    0.02, is reached at |action| 0.02): forward, turning both ways, backing."""
    t = np.arange(n)
    return np.stack([np.sin(t / 9.0) + 0.3, np.cos(t / 13.0)], axis=-1)


def car_states(s: CarAgent) -> dict[str, dict]:
    """The Car states the Goal and Circle records start from (names -> qpos, qvel, ctrl)."""
    rng = np.random.default_rng(11)
    rest = s.settled()
    ball = rng.normal(size=4)
    return {
        "rest": rest,
        "tilted_moving": {"qpos": [0.0, 0.0, 0.3, *euler_quat(2.0, -0.3, 0.4), 0.7, -1.9, *(ball / np.linalg.norm(ball))],
                          "qvel": rng.uniform(-1.5, 1.5, 11).tolist(), "ctrl": rng.uniform(-1.0, 1.0, 2).tolist()},
    }


CAR_STEP_KEYS = ("reward", "cost", "goal_met", "cost_info", "xy", "yaw")
"""What a Car rollout keeps of each step: what the tests compare (:func:`lean`)."""
CAR_DYNAMICS_OBS = 25
"""The steps of a Car ``dynamics`` rollout whose observation is kept (the tests bound its lidar over these)."""


def lean(rollout: dict, obs_steps: int = 0, keep: tuple[str, ...] = ()) -> dict:
    """A Car rollout cut to what the tests compare: each step's :data:`CAR_STEP_KEYS` (and ``keep``),
    its full observation only at the first ``obs_steps`` steps (its qpos, qvel, height and raw cost
    terms are dropped)."""
    steps = [{**{k: s[k] for k in (*CAR_STEP_KEYS, *keep)}, **({"obs": s["obs"]} if i < obs_steps else {})}
             for i, s in enumerate(rollout["steps"])]
    return {**rollout, "steps": steps}


def car_moving(rest: dict, xy, yaw: float, speed: float, ctrl=(0.0, 0.0)) -> dict:
    """The resting Car moved to ``xy``, turned by ``yaw`` and rolling forward at ``speed``."""
    return {**turned(rest, xy, yaw), "qvel": car_forward(yaw, speed), "ctrl": list(ctrl)}


def car_goal_records(env_id: str) -> dict:
    """The Goal tasks on the Car: states for every observation key (resting, rolling with its motors
    driven, tilted and spinning in the air), the hazard and vase costs (a vase against the front
    bumper and against a wheel's face: the wheels meet objects through their bounding boxes in
    crax), rewards and the goal over short rollouts, a vase pushed, and a dynamics rollout."""
    s = CarScene(env_id)
    level = int(env_id.split("-")[0][-1])
    car = car_states(s)
    rest = car["rest"]
    states, rollouts = [], []
    states.append(s.record_state("goal_ahead", turned(rest, [0.1, -0.2], 0.7), {"goal": [[1.2, 0.4]]}))
    states.append(s.record_state("rolling_driven", car_moving(rest, [-0.3, 0.5], -2.5, 0.5, (1.0, -0.4)),
                                 {"goal": [[-1.0, -1.1]]}))
    states.append(s.record_state("goal_at_bin_edge", rest, {"goal": [[1.0 * np.cos(np.pi / 8), 1.0 * np.sin(np.pi / 8)]]}))
    states.append(s.record_state("tilted_moving", car["tilted_moving"], {"goal": [[0.9, -0.7]]}))
    if level >= 1:
        states.append(s.record_state("hazards_outside", turned(rest, [0.0, 0.0], 0.3), {"goal": [[1.0, 1.0]], "hazards": HAZARDS}))
        states += hazard_states(s, rest)
        # 3 mm into the front bumper (its face at y = −0.175) and into the right wheel's outer face (x = 0.155)
        states.append(s.record_state("vase_against_bumper", rest, {"goal": [[1.0, 1.0]], "vases": [[0.0, -0.272, 0.0]]}))
        states.append(s.record_state("vase_against_wheel", rest, {"goal": [[1.0, 1.0]], "vases": [[0.252, 0.1, 0.0]]}))
    if level == 2:  # the tests push a vase at level 2 only (level 1's vase costs nothing)
        rollouts.append(lean(s.record_rollout("vase_pushed", rest, {"goal": [[1.5, -1.5]], "vases": [[0.0, -0.45, 0.4]]},
                                              np.tile([[1.0, 1.0]], (15, 1)))))
    rollouts.append(lean(s.record_rollout("approach_goal", rest, {"goal": [[0.0, -0.9]]}, np.tile([[1.0, 1.0]], (10, 1)))))
    rollouts.append(lean(s.record_rollout("reach_goal", car_moving(rest, [0.0, 0.0], 0.0, 0.5), {"goal": [[0.0, -0.32]]},
                                          np.tile([[1.0, 1.0]], (3, 1)))))
    if level != 1:  # the tests drive levels 0 and 2 (level 1 differs from 2 in its counts and vase cost)
        rollouts.append(lean(s.record_rollout("dynamics", rest, {"goal": [[-1.6, 1.4]], "hazards": [[2.0, -1.5], [0.9, 1.2]]},
                                              car_drive(150)), CAR_DYNAMICS_OBS))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})


def car_circle_records(env_id: str) -> dict:
    """Circle on the Car: resting inside, on and beyond each sigwall, in and beyond the lidar's
    range, tilted and moving; one-step rewards rolling along, against and across the circle;
    12-step drives across the sigwalls; a dynamics rollout. The same cases at every level."""
    s = CarCircleScene(env_id)
    level = int(env_id.split("-")[0][-1])
    car = car_states(s)
    rest, diagonal = car["rest"], 1.5 / np.sqrt(2)
    states = [s.record_state(name, agent, {}) for name, agent in [
        ("inside_at_rest", turned(rest, [0.3, -0.4], 0.5)),
        ("tilted_moving", {**car["tilted_moving"], "qpos": [-0.6, 0.7, *car["tilted_moving"]["qpos"][2:]]}),
        ("on_radius_rolling", car_moving(rest, [diagonal, diagonal], 3 * np.pi / 4 + np.pi / 2, 0.4)),
        *((name, turned(rest, xy, yaw)) for name, xy, yaw in SIGWALL_POSES),
    ]]
    if level == 1:  # the tests step levels 0 and 2 (level 1 differs from 2 in its y walls' absence)
        return rounded({**s.spaces(), "states": states, "rollouts": []})
    # one step each: the reward of a step from a set pose and velocity; the car drives along its
    # chassis' −y axis, so yaw + π/2 is its heading
    quarter = np.pi / 2
    rollouts = [lean(s.record_rollout(name, agent, {}, np.asarray([action])), 1) for name, agent, action in [
        ("reward_along_on_radius", car_moving(rest, [diagonal, diagonal], 3 * np.pi / 4 + quarter, 0.5), [1.0, 1.0]),
        ("reward_against_on_radius", car_moving(rest, [diagonal, -diagonal], 3 * np.pi / 4 + quarter, 0.5), [0.01, -0.01]),
        ("reward_along_inside", car_moving(rest, [0.4, 0.3], 2.2 + quarter, 0.4), [0.0, 0.0]),
        ("reward_outside", car_moving(rest, [2.0, -0.5], 1.4 + quarter, 0.6), [-1.0, -1.0]),
        ("reward_radial", car_moving(rest, [0.6, 0.8], 0.93 + quarter, 0.5), [0.0, 0.0]),
        ("reward_near_origin", car_moving(rest, [0.05, -0.02], -0.3 + quarter, 0.3), [0.005, 0.0]),
    ]]
    rollouts += [lean(s.record_rollout(name, agent, {}, np.tile([[1.0, 1.0]], (12, 1)))) for name, agent in [
        ("cross_x_plus", car_moving(rest, [0.95, 0.2], quarter, 0.7)),
        ("cross_x_minus", car_moving(rest, [-0.95, -0.4], np.pi + quarter, 0.7)),
        ("cross_y_minus", car_moving(rest, [0.3, -0.95], 0.0, 0.7)),
    ]]
    rollouts.append(lean(s.record_rollout("dynamics", turned(rest, [0.5, 0.0], np.pi / 2), {}, car_drive(150)),
                         CAR_DYNAMICS_OBS))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})



class CarPushScene(CarAgent, PushScene):
    """A Push env on the Car, set by hand (Safety-Gymnasium gives the Car a smaller, lighter box:
    half-size 0.125, density 0.0005)."""


def car_push_records(env_id: str) -> dict:
    """Push on the Car: states for every lidar (the box, goal, hazards, pillars; the Car resting,
    rolling and tilted), the box and pillars pressed 3 mm into the front bumper and a wheel's outer
    face (level 2: two pillars' contact cost); rollouts at levels 0 and 2: driving at the box (the
    agent–box reward), the box reaching the goal, and (level 0) a drive that pushes the box 0.6 m,
    (level 2) one into a pillar."""
    s = CarPushScene(env_id)
    level = int(env_id.split("-")[0][-1])
    car = car_states(s)
    rest = car["rest"]
    size = s.task.push_box.size
    bumper, wheel = [0.0, -0.175 - size + 0.003], [0.155 + size - 0.003, 0.1]  # 3 mm into the face
    states = [
        s.record_state("box_and_goal", turned(rest, [0.1, -0.2], 0.7), {"goal": [[-0.7, 0.6]], "push_box": [[0.8, 0.5, 0.3]]}),
        s.record_state("rolling_driven", car_moving(rest, [-0.3, 0.5], -2.5, 0.5, (1.0, -0.4)),
                       {"goal": [[1.0, -1.1]], "push_box": [[-1.0, -0.4, 2.0]]}),
        s.record_state("tilted_moving", car["tilted_moving"], {"goal": [[0.9, -0.7]], "push_box": [[np.cos(np.pi / 8), np.sin(np.pi / 8), 1.0]]}),
        s.record_state("box_against_bumper", rest, {"goal": [[-1.0, 1.0]], "push_box": [[*bumper, 0.0]]}),
        s.record_state("box_against_wheel", rest, {"goal": [[-1.0, 1.0]], "push_box": [[*wheel, 0.0]]}),
    ]
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        pl = [[0.9, -0.6], [-0.8, -0.9], [0.2, 1.3], [-1.4, 0.4]]
        box = [[-0.2, -0.9, 0.5]]
        pillar = s.task.pillars.size
        states += [
            s.record_state("hazards_and_pillars_seen", turned(rest, [0.0, 0.0], 0.3),
                           {"goal": [[1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}),
            s.record_state("hazard_inside_edge", turned(rest, [0.35, 0.3], 1.0),
                           {"goal": [[1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}),
            s.record_state("hazard_inside_centre", turned(rest, [0.62, 0.31], -1.0),
                           {"goal": [[-1.0, 1.0]], "hazards": hz, "pillars": pl, "push_box": box}),
            s.record_state("box_in_hazard", turned(rest, [0.0, -0.45], 0.0),
                           {"goal": [[-1.0, 1.0]], "hazards": [[0.6, 0.3]], "push_box": [[0.6, 0.3, 0.2]]}),
            s.record_state("pillar_against_bumper", rest,
                           {"goal": [[-1.0, 1.0]], "pillars": [[0.0, -0.175 - pillar + 0.003]]}),
            s.record_state("pillar_against_wheel", rest, {"goal": [[-1.0, 1.0]], "pillars": [[0.155 + pillar - 0.003, 0.1]]}),
        ]
    if level >= 2:
        states.append(s.record_state("two_pillars_touched", rest, {"goal": [[-1.0, 1.0]], "pillars": [
            [0.0, -0.175 - pillar + 0.003], [0.155 + pillar - 0.003, 0.1]]}))
    rollouts = []
    box_keys = ("box_pos", "dist_box", "dist_box_goal")
    if level != 1:  # the tests step levels 0 and 2
        rollouts.append(lean(s.record_rollout("approach_box", rest, {"goal": [[1.2, 1.2]], "push_box": [[0.0, -0.9, 0.0]]},
                                              np.tile([[1.0, 1.0]], (12, 1))), keep=box_keys))
        rollouts.append(lean(s.record_rollout("box_reaches_goal", turned(rest, [-0.8, -0.8], 0.0),
                                              {"goal": [[0.5, 0.0]], "push_box": [[0.25, 0.0, 0.0]]}, np.zeros((2, 2))),
                             keep=box_keys))
    if level == 0:  # struck by the bumper at step 7, pushed 0.6 m along −y
        rollouts.append(lean(s.record_rollout("push_box", rest, {"goal": [[1.2, 1.2]], "push_box": [[0.0, -0.45, 0.0]]},
                                              np.tile([[1.0, 1.0]], (30, 1))), keep=box_keys))
    if level == 2:
        rollouts.append(lean(s.record_rollout("pillar_bump", rest, {"goal": [[1.2, 1.2]], "pillars": [[0.0, -0.6]]},
                                              np.tile([[1.0, 1.0]], (25, 1)))))
    box = s.task.model.body("push_box")
    return rounded({**s.spaces(), "box": {"mass": float(box.mass[0]), "inertia": box.inertia.tolist()},
                    "states": states, "rollouts": rollouts})


class CarButtonScene(CarAgent, ButtonScene):
    """A Button env on the Car, set by hand (:meth:`ButtonScene.set` writes the Car's whole state)."""


def car_button_records(env_id: str) -> dict:
    """Button on the Car: states for every lidar and cost (buttons pressed 3 mm into the front and
    back bumpers, the timer; hazards; gremlins seen, against the bumper and a wheel's face); at
    levels 0 and 2, drives into the goal button and a wrong one (press, timer, rewards, button
    cost), at level 2 a gremlin sweeping the Car, at level 0 the dynamics drive."""
    s = CarButtonScene(env_id)
    level = int(env_id.split("-")[0][-1])
    car = car_states(s)
    rest = car["rest"]
    buttons = [[0.9, 0.3], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]
    front, back = [0.0, -0.175 - 0.1 + 0.003], [0.0, 0.16 + 0.1 - 0.003]  # a button (radius 0.1) 3 mm into a bumper
    touch = [front, *buttons[1:]]
    states = [
        s.record_state("buttons_seen", turned(rest, [0.1, -0.2], 0.7), {"buttons": buttons}, goal_button=1),
        s.record_state("buttons_rolling_driven", car_moving(rest, [-0.3, 0.5], -2.5, 0.5, (1.0, -0.4)),
                       {"buttons": buttons}, goal_button=3),
        s.record_state("tilted_moving", car["tilted_moving"], {"buttons": buttons}, goal_button=2),
        s.record_state("timer_running", turned(rest, [0.1, -0.2], 0.7), {"buttons": buttons}, goal_button=1, timer=4),
        s.record_state("touching_goal_button", rest, {"buttons": touch}, goal_button=0),
        s.record_state("touching_wrong_button", rest, {"buttons": touch}, goal_button=2),
        s.record_state("touching_wrong_button_timer", rest, {"buttons": touch}, goal_button=2, timer=3),
        s.record_state("touching_two_wrong_buttons", rest, {"buttons": [front, back, *buttons[2:]]}, goal_button=3),
    ]
    if level >= 1:
        hz = [[0.6, 0.3], [-0.5, 0.9], [1.1, -1.0], [-1.3, -0.6]]
        gr = [[0.8, -0.5, 0.3], [-0.9, -0.2, 1.2], [0.2, 1.1, 2.0], [-1.2, 1.3, 0.0]]
        states += [
            s.record_state("hazard_inside_edge", turned(rest, [0.45, 0.3], 1.0), {"buttons": buttons, "hazards": hz}),
            s.record_state("two_hazards_inside", turned(rest, [0.0, 0.0], 2.0),
                           {"buttons": buttons, "hazards": [[0.1, 0.05], [-0.08, -0.1]]}),
            s.record_state("gremlins_seen", turned(rest, [0.0, 0.0], -0.4), {"buttons": buttons, "gremlins": gr}),
            # a gremlin (a box of half-size 0.1) 3 mm into the front bumper and into the right wheel's outer face
            s.record_state("gremlin_against_bumper", rest, {"buttons": buttons, "gremlins": [[0.0, -0.272, 0.0]]}),
            s.record_state("gremlin_against_wheel", rest, {"buttons": buttons, "gremlins": [[0.252, 0.1, 0.0]]}),
        ]
    rollouts = []
    step_keys = ("goal_button", "timer")
    if level != 1:  # the tests step levels 0 and 2
        press = [[0.0, -0.55], [-0.6, 0.8], [-0.7, -0.9], [1.1, -1.2]]  # 0.275 m ahead of the bumper
        rollouts.append(lean(s.record_rollout("press_goal_button", rest, {"buttons": press}, np.tile([[1.0, 1.0]], (30, 1)),
                                              goal_button=0), 30, keep=step_keys))
        rollouts.append(lean(s.record_rollout("press_wrong_button", rest, {"buttons": press}, np.tile([[1.0, 1.0]], (20, 1)),
                                              goal_button=1), 20, keep=step_keys))
    if level == 2:
        rollouts.append(lean(s.record_rollout("gremlin_sweeps_agent", turned(rest, [0.45, 0.0], 0.0),
                                              {"buttons": [[1.3, -1.3]], "gremlins": [[0.0, 0.0, 0.0]]}, np.zeros((90, 2))),
                             keep=step_keys))
    if level == 0:
        layout = {"buttons": [[-1.6, 1.4], [1.2, 1.5], [-1.5, -1.6], [1.8, -1.0]]}
        rollouts.append(lean(s.record_rollout("dynamics", rest, layout, car_drive(150), goal_button=0), CAR_DYNAMICS_OBS))
    return rounded({**s.spaces(), "states": states, "rollouts": rollouts})


def header() -> dict:
    """What a reference file starts with: the versions it was recorded with, and no tasks yet."""
    import importlib.metadata as md

    return {"safety_gymnasium": md.version("safety-gymnasium"), "mujoco": mujoco.__version__,
            "python": sys.version.split()[0], "tasks": {}}


def write(path: pathlib.Path, out: dict) -> None:
    """Writes a reference file (compact JSON) and says where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, separators=(",", ":")))
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)", file=sys.stderr)


def record(out: dict, tasks) -> None:
    """Records each ``(env id, records function)`` of ``tasks`` into ``out["tasks"]``, in order, saying so."""
    for env_id, records in tasks:
        out["tasks"][env_id] = records(env_id)
        print(env_id, "recorded", file=sys.stderr)


def main() -> None:
    out = header()
    for task, records in (("Goal", goal_records), ("Circle", circle_records), ("Push", push_records)):
        record(out, [(f"SafetyPoint{task}{level}-v0", records) for level in (0, 1, 2)])
    for level in (0, 1, 2):
        record(out, [(f"SafetyPointButton{level}-v0", button_records), (f"SafetyAntGoal{level}-v0", ant_goal_records),
                     (f"SafetyAntCircle{level}-v0", ant_circle_records), (f"SafetyAntPush{level}-v0", ant_push_records),
                     (f"SafetyAntButton{level}-v0", ant_button_records)])
    for level in (0, 1, 2):
        record(out, [(f"SafetyCar{task}{level}-v0", records) for task, records in (
            ("Goal", car_goal_records), ("Circle", car_circle_records), ("Push", car_push_records),
            ("Button", car_button_records))])
    write(OUT, out)


if __name__ == "__main__":
    main()
