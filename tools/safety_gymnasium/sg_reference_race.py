"""Records Safety-Gymnasium 1.0.0's Race task on hand-set states, for crax's fidelity tests.

Run with the Python 3.10 environment that has ``safety-gymnasium==1.0.0`` (docs/safety_gymnasium.md
says how to make it), from the repository root::

    /work/sg-venv/bin/python tools/safety_gymnasium/sg_reference_race.py   # writes tests/data/safety_gym_race_reference.json
    /work/sg-venv/bin/python tools/safety_gymnasium/sg_reference_race.py --agents doggo-racecar
        # writes tests/data/safety_gym_race_agents_reference.json

Safety-Gymnasium 1.0.0's wheel lacks the PNG textures its Race scene names (the village floor and
the meshes' textures), so its Race envs fail to build; :func:`without_missing_textures` drops the
textures whose files are missing from the XML before MuJoCo compiles it (materials keep their
colours; nothing of the physics changes).

For each ``Safety{Point,Car,Ant}Race{0,1,2}-v0`` it records the spaces and the task's definition
(placements, goal, hazards, static geoms and their contact cost, reward terms). On the Point it also
records, per level:

- ``walls``: each static geom's mesh hull (what MuJoCo collides with) cut at the agents' height
  (z = 0.1) as a polygon, and the smallest rectangle holding it (the box crax collides with);
- ``onsets``: for each wall, lines on which the Point (facing the wall: its front box leads; or
  turned across: its sphere leads) moves towards a face; where along the line it first touches
  the wall (bisection on MuJoCo's contacts), crax's contact onset is compared with it;
- ``states``: hand-set poses (at the start, in view of the goal, in a hazard, touching a wall
  3 cm past the onset, 3 cm short of it): observation, raw and indicator costs;
- ``resets``: the start layouts of a few seeds (agent, goal, hazards);
- ``rollouts``: one short drive per level (level 0: into the goal, which ends the episode; levels
  1-2: into a wall, each step's contact cost).

A touching state stands 3 cm past Safety-Gymnasium's contact onset, an apart one 3 cm short of it
(crax's boxes first touch within 1.7 cm of the bamboo walls' hulls, 2.8 cm of the rocks').

The Car and the Ant (``--agents point-car-ant``, the default, with the Point above), and the Doggo
and the Racecar (``--agents doggo-racecar``: ``Safety{Doggo,Racecar}Race{0,1,2}-v0``, written to
tests/data/safety_gym_race_agents_reference.json so the first file stays as recorded) record the
spaces, the task's definition and their resting pose's observation at the start, with the goal ahead,
in a hazard, and touching and 3 cm short of a wall (:func:`other_agent_records`). The scenes are
:mod:`sg_reference`'s; each agent's whole joint state is written and recorded as in its Goal
recorder (:mod:`sg_reference` for the Car and the Ant, :mod:`sg_reference_doggo`,
:mod:`sg_reference_racecar`).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import types

import mujoco
import numpy as np
import safety_gymnasium.world as sg_world
from sg_reference import CAR_QPOS, AntAgent, CarAgent, Scene, ant_qpos, header, rounded, turned, write
from sg_reference_doggo import DoggoAgent, doggo_qpos
from sg_reference_racecar import START as RACECAR_QPOS
from sg_reference_racecar import RacecarAgent

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data"
OUT = DATA / "safety_gym_race_reference.json"
OUT_AGENTS = DATA / "safety_gym_race_agents_reference.json"
SECTION_Z = 0.1
"""Height at which the hulls are cut (the Point's sphere centre and front box, the Car's chassis)."""
TOUCH, APART = 0.03, 0.03
"""How far past the contact onset (m) a touching state is placed, and how far short of it an apart one."""


def without_missing_textures(xml: str) -> str:
    """``xml`` without the ``<texture>`` elements whose files are missing, nor materials' references to them."""
    texdir = os.path.join(sg_world.BASE_DIR, "assets", "textures")
    missing = set()

    def drop(match: re.Match) -> str:
        element = match.group(0)
        file = re.search(r'file="([^"]+)"', element)
        if file and not os.path.exists(os.path.join(texdir, file.group(1))):
            missing.add(re.search(r'name="([^"]+)"', element).group(1))
            return ""
        return element

    xml = re.sub(r"<texture\b[^>]*?/>|<texture\b[^>]*?>\s*</texture>", drop, xml)
    for name in missing:
        xml = xml.replace(f'texture="{name}"', "")
    return xml


class _Model:
    @staticmethod
    def from_xml_string(xml, *args, **kwargs):
        return mujoco.MjModel.from_xml_string(without_missing_textures(xml), *args, **kwargs)


_mujoco = types.ModuleType("mujoco_without_missing_textures")
_mujoco.__dict__.update(mujoco.__dict__)
_mujoco.MjModel = _Model
sg_world.mujoco = _mujoco


def hull2d(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2-D points, counter-clockwise (monotone chain)."""
    pts = sorted(map(tuple, points))

    def half(seq):
        h: list = []
        for q in seq:
            while len(h) >= 2 and np.cross(np.subtract(h[-1], h[-2]), np.subtract(q, h[-2])) <= 0:
                h.pop()
            h.append(q)
        return h

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def hull_section(m, d, g: int, z: float) -> tuple[np.ndarray, float]:
    """The cut at height ``z`` of geom ``g``'s mesh hull (MuJoCo's ``mesh_graph``), in world x, y,
    and the hull's top."""
    mid = m.geom_dataid[g]
    va = m.mesh_vertadr[mid]
    v = m.mesh_vert[va: va + m.mesh_vertnum[mid]].astype(float)
    ga = m.mesh_graphadr[mid]
    nv, nf = m.mesh_graph[ga], m.mesh_graph[ga + 1]
    ids = m.mesh_graph[ga + 2 + nv: ga + 2 + 2 * nv]
    faces = m.mesh_graph[ga + 2 + 3 * nv + 3 * nf: ga + 2 + 3 * nv + 6 * nf].reshape(nf, 3)
    w = d.geom_xpos[g] + v @ d.geom_xmat[g].reshape(3, 3).T
    cut = []
    for f in faces:
        for a, b in ((f[0], f[1]), (f[1], f[2]), (f[2], f[0])):
            za, zb = w[a, 2] - z, w[b, 2] - z
            if za * zb < 0:
                cut.append(w[a, :2] + za / (za - zb) * (w[b, :2] - w[a, :2]))
    return hull2d(np.array(cut)), float(w[ids, 2].max())


def min_rectangle(p: np.ndarray) -> dict:
    """The smallest rectangle holding polygon ``p``: centre, half-sizes, yaw in [−π/4, π/4)."""
    best = None
    for i in range(len(p)):
        e = p[(i + 1) % len(p)] - p[i]
        yaw = (np.arctan2(e[1], e[0]) + np.pi / 4) % (np.pi / 2) - np.pi / 4
        rot = np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]])
        q = p @ rot.T
        lo, hi = q.min(0), q.max(0)
        if best is None or np.prod(hi - lo) < best[0] - 1e-12:
            best = (np.prod(hi - lo), yaw, lo, hi)
    _, yaw, lo, hi = best
    c = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]) @ ((lo + hi) / 2)
    return {"x": c[0], "y": c[1], "hx": (hi - lo)[0] / 2, "hy": (hi - lo)[1] / 2, "yaw": yaw}


class RaceScene(Scene):
    """A Race env set by hand. Its reset puts the agent at the origin, inside ``race_wall3``'s hull,
    where Safety-Gymnasium's reset would refuse a layout that costs: the wall contact cost is off
    while it resets (the state written after it is what is recorded)."""

    def __init__(self, env_id: str):
        self.env_id = env_id
        self.env = safety_gymnasium_make(env_id)
        self.builder = self.env.unwrapped
        self.task = self.builder.task
        self.task.agent.locations = [(0.0, 0.0)]
        self.task.agent.rot = 0.0
        self.reset_builder = self.builder.reset
        self.builder.reset = self._reset  # Scene.set resets first
        self.builder.reset(seed=0)
        self.counts = {"hazards": getattr(getattr(self.task, "hazards", None), "num", 0), "vases": 0}

    def _reset(self, seed=None):
        cost, self.task.static_geoms_contact_cost = self.task.static_geoms_contact_cost, None
        try:
            return self.reset_builder(seed=seed)
        finally:
            self.task.static_geoms_contact_cost = cost

    def set(self, agent: dict, layout: dict) -> dict:
        return super().set(agent, {"goal": [list(self.task.goal.locations[0])], **layout})

    def place(self, agent: dict) -> None:
        """Only the agent moved (no reset): for the bisections."""
        self.write_agent(self.task.data, agent)
        mujoco.mj_forward(self.task.model, self.task.data)

    def settled_at(self, qpos: list[float], xy, steps: int = 10) -> dict:
        """The agent's state after ``steps`` control steps of zero action from ``qpos`` moved to ``xy``."""
        qpos = list(qpos)
        qpos[:2] = xy
        self.set({"qpos": qpos}, {})
        nu = self.task.model.nu
        for _ in range(steps):
            self.task.simulation_forward(np.zeros(nu))
        d = self.task.data  # the agent's joints are the scene's only ones
        return {"qpos": d.qpos.tolist(), "qvel": d.qvel.tolist(), "ctrl": [0.0] * nu}

    def spaces(self) -> dict:
        t = self.task
        hazards = getattr(t, "hazards", None)
        return {**super().spaces(), "agent_placements": [list(p) for p in t.agent.placements],
                "agent_keepout": t.agent.keepout, "floor_size": list(t.floor_conf.size),
                "continue_goal": t.mechanism_conf.continue_goal, "reward_clip": t.reward_conf.reward_clip,
                "goal": {"locations": [list(p) for p in t.goal.locations], "size": t.goal.size,
                         "keepout": t.goal.keepout, "reward_goal": t.goal.reward_goal,
                         "reward_distance": t.goal.reward_distance, "is_meshed": t.goal.is_meshed},
                "hazards": None if hazards is None else {
                    "num": hazards.num, "size": hazards.size, "keepout": hazards.keepout, "cost": hazards.cost,
                    "placements": [list(p) for p in hazards.placements], "is_meshed": hazards.is_meshed},
                "static_geoms": sorted(t.static_geoms_names), "static_geoms_contact_cost": t.static_geoms_contact_cost,
                "static_geom_order": [n for n in WALL_ORDER if n in t.static_geoms_names]}

    def wall_contact(self, wall: str) -> float:
        """The deepest penetration (m; > 0 touching) between an agent geom and ``wall`` now."""
        m, d = self.task.model, self.task.data
        g = m.geom(wall).id
        agent = set(self.task.agent.body_info.geom_names)
        depth = -np.inf
        for c in d.contact[: d.ncon]:
            if g in (c.geom1, c.geom2) and (m.geom(c.geom1).name in agent or m.geom(c.geom2).name in agent):
                depth = max(depth, -c.dist)
        return depth


WALL_ORDER = ("race_wall1_down", "race_wall1_up", "race_wall2_left", "race_wall22_right", "race_wall3", "race_wall4",
              "race_wall5", "small_stone1", "small_stone2")


def safety_gymnasium_make(env_id: str):
    import safety_gymnasium

    return safety_gymnasium.make(env_id)


class CarRaceScene(CarAgent, RaceScene):
    """Race on the Car."""


class AntRaceScene(AntAgent, RaceScene):
    """Race on the Ant."""


class DoggoRaceScene(DoggoAgent, RaceScene):
    """Race on the Doggo."""


class RacecarRaceScene(RacecarAgent, RaceScene):
    """Race on the Racecar."""


def walls(s: RaceScene) -> list[dict]:
    m, d = s.task.model, s.task.data
    out = []
    for name in WALL_ORDER:
        section, top = hull_section(m, d, m.geom(name).id, SECTION_Z)
        out.append({"name": name, "section": section.tolist(), "top": top, "box": min_rectangle(section)})
    return out


def onset(s: RaceScene, pose, wall: str, start, direction) -> float:
    """How far along ``start + t · direction`` the agent, posed by ``pose(xy)``, first touches ``wall``."""
    def touching(t):
        s.place(pose(np.add(start, t * np.asarray(direction))))
        return s.wall_contact(wall) > 0

    lo, hi = 0.0, 0.6
    assert not touching(lo) and touching(hi), (wall, start, direction)
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if touching(mid) else (mid, hi)
    return (lo + hi) / 2


def approach_lines(box: dict) -> list[tuple[list[float], list[float], str]]:
    """Lines towards the middle of each face of a wall's box, starting 0.6 m out: start, unit direction, face."""
    c, (hx, hy), yaw = np.array([box["x"], box["y"]]), (box["hx"], box["hy"]), box["yaw"]
    ux, uy = np.array([np.cos(yaw), np.sin(yaw)]), np.array([-np.sin(yaw), np.cos(yaw)])
    out = []
    for face, normal, half in (("+x", ux, hx), ("-x", -ux, hx), ("+y", uy, hy), ("-y", -uy, hy)):
        start = c + normal * (half + 0.6)
        out.append((start.tolist(), (-normal).tolist(), face))
    return out


def point_pose(yaw: float):
    return lambda xy: {"xy": [float(v) for v in xy], "yaw": yaw}


def point_records(env_id: str, level: int) -> dict:
    s = RaceScene(env_id)
    record = {**s.spaces(), "walls": walls(s)}
    onsets, states = [], []
    for w in record["walls"]:
        for start, direction, face in approach_lines(w["box"]):
            heading = float(np.arctan2(direction[1], direction[0]))
            for lead, yaw in (("box", heading), ("sphere", heading + np.pi / 2)):
                pose = point_pose(yaw)
                try:
                    t = onset(s, pose, w["name"], start, direction)
                except AssertionError:
                    continue  # the line starts inside another wall's reach or never meets this one
                onsets.append({"wall": w["name"], "face": face, "lead": lead, "start": start, "direction": direction,
                               "yaw": yaw, "t": t})
    record["onsets"] = onsets
    goal = list(s.task.goal.locations[0])
    hazards = [[(-0.45 + 0.2 * i) * 3.5, (0.3 - 0.09 * (-1) ** i) * 3.5] for i in range(s.counts["hazards"])]
    layout = {"hazards": hazards} if hazards else {}
    cx, cy = [(a + b) / 2 for a, b in zip(s.task.agent.placements[0][:2], s.task.agent.placements[0][2:], strict=True)]
    poses = [("start", [cx, cy], 0.4, [0.0, 0.0, 0.0]), ("goal_ahead", [2.2, 1.2], -0.2, [0.3, 0.1, 0.5]),
             ("at_the_goal", [goal[0] - 0.1, goal[1] + 0.15], 2.0, [0.0, 0.0, 0.0])]
    if hazards:
        poses += [("in_a_hazard", [hazards[5][0] + 0.1, hazards[5][1] - 0.05], 1.0, [0.0, 0.0, 0.0]),
                  ("hazard_edge", [hazards[1][0] + 0.25, hazards[1][1]], -1.0, [0.2, 0.0, 0.0])]
    for name, xy, yaw, qvel in poses:
        states.append(s.record_state(name, {"xy": xy, "yaw": yaw, "qvel": qvel}, layout))
    for o in onsets:
        if o["face"] in ("+x", "-y") or o["lead"] != "box":
            continue
        for kind, t in (("touching", o["t"] + TOUCH), ("apart", o["t"] - APART)):
            xy = np.add(o["start"], t * np.asarray(o["direction"]))
            states.append(s.record_state(f"{kind}_{o['wall']}{o['face']}", point_pose(o["yaw"])(xy), layout))
    record["states"] = states
    record["resets"] = resets(env_id)
    record["rollouts"] = [point_rollout(s, level, layout)]
    return record


def resets(env_id: str, seeds=range(8)) -> list[dict]:
    env = safety_gymnasium_make(env_id)
    out = []
    for seed in seeds:
        env.reset(seed=seed)
        d, t = env.unwrapped.task.data, env.unwrapped.task
        mat = d.body("agent").xmat.reshape(3, 3)
        out.append({"seed": seed, "agent": d.body("agent").xpos[:2].tolist(),
                    "yaw": float(np.arctan2(mat[1, 0], mat[0, 0])), "goal": d.body("goal").xpos[:2].tolist(),
                    "hazards": [d.body(f"hazard{i}").xpos[:2].tolist() for i in range(getattr(getattr(t, "hazards", None), "num", 0))]})
    return out


def point_rollout(s: RaceScene, level: int, layout: dict) -> dict:
    if level == 0:  # into the goal: reached on the way, the episode ends
        return s.record_rollout("into_the_goal", {"xy": [2.45, 1.0], "yaw": 0.0, "qvel": [0.3, 0.0, 0.0]}, layout,
                                np.tile([[1.0, 0.0]], (40, 1)))
    if level == 1:  # north into race_wall2_left, then along it
        actions = np.concatenate([np.tile([[1.0, 0.0]], (25, 1)), np.tile([[0.6, 0.5]], (15, 1))])
        return s.record_rollout("into_a_wall", {"xy": [-1.2, 1.2], "yaw": np.pi / 2}, layout, actions)
    actions = np.concatenate([np.tile([[1.0, 0.0]], (25, 1)), np.tile([[0.5, -0.6]], (15, 1))])
    return s.record_rollout("into_the_moved_wall", {"xy": [-2.45, -0.4], "yaw": 0.0}, layout, actions)


def other_agent_records(env_id: str, scene) -> dict:
    s = scene(env_id)
    rest = s.settled_at(START_QPOS[scene], [-1.0, 1.2])
    record = s.spaces()
    level = int(env_id.split("-")[0][-1])
    cx, cy = [(a + b) / 2 for a, b in zip(s.task.agent.placements[0][:2], s.task.agent.placements[0][2:], strict=True)]
    hazards = [[(-0.45 + 0.2 * i) * 3.5, (0.3 - 0.09 * (-1) ** i) * 3.5] for i in range(s.counts["hazards"])]
    layout = {"hazards": hazards} if hazards else {}
    poses = [("start", [cx, cy], 0.4), ("goal_ahead", [2.3, 1.1], 0.3)]
    if hazards:
        poses.append(("in_a_hazard", [hazards[5][0] + 0.1, hazards[5][1] - 0.05], 1.0))
    states = [s.record_state(name, turned(rest, xy, yaw), layout) for name, xy, yaw in poses]
    if level >= 1:  # pressed against race_wall2_left's south face, past where it first touches
        def pose(xy):
            return turned(rest, xy, np.pi / 2)

        t = onset(s, pose, "race_wall2_left", [-1.0, 1.0], [0.0, 1.0])
        states.append(s.record_state("touching_race_wall2_left", pose([-1.0, 1.0 + t + TOUCH]), layout))
        states.append(s.record_state("apart_race_wall2_left", pose([-1.0, 1.0 + t - APART]), layout))
    record["states"] = states
    return record


START_QPOS = {CarRaceScene: CAR_QPOS, AntRaceScene: ant_qpos([0.0, 0.0]), DoggoRaceScene: doggo_qpos([0.0, 0.0]),
              RacecarRaceScene: RACECAR_QPOS}
"""Where each agent settles from, its Goal recorder's start pose (moved into the corridor first: the
origin is inside a wall)."""

AGENT_SETS = {"point-car-ant": (OUT, {"Car": CarRaceScene, "Ant": AntRaceScene}),
              "doggo-racecar": (OUT_AGENTS, {"Doggo": DoggoRaceScene, "Racecar": RacecarRaceScene})}
"""What ``--agents`` records: the file, and the agents recorded by :func:`other_agent_records` (the
first set also records the Point, :func:`point_records`)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", choices=AGENT_SETS, default="point-car-ant", help="which file to record")
    which = parser.parse_args().agents
    path, scenes = AGENT_SETS[which]
    out = header()
    for level in (0, 1, 2):
        if which == "point-car-ant":
            env_id = f"SafetyPointRace{level}-v0"
            out["tasks"][env_id] = rounded(point_records(env_id, level))
            print(env_id, "recorded", file=sys.stderr)
        for agent, scene in scenes.items():
            env_id = f"Safety{agent}Race{level}-v0"
            out["tasks"][env_id] = exact_spaces(other_agent_records(env_id, scene))
            print(env_id, "recorded", file=sys.stderr)
    write(path, out)


def exact_spaces(record: dict) -> dict:
    """``rounded(record)`` with its spaces' bounds as Safety-Gymnasium gives them (the Racecar's
    steering limit, 0.785 in float32, is not 9 digits; the other agents' bounds are ±1 and ±inf)."""
    return {**rounded(record), "observation_space": record["observation_space"], "action_space": record["action_space"]}


if __name__ == "__main__":
    main()
