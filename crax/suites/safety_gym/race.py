"""Safety-Gymnasium 1.0.0's Race (``tasks/safe_vision/race/race_level{0,1,2}.py``, ``configs/race.yaml``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import mujoco

from crax.bodies.base import Body
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, Param, TaskParam
from crax.costs.agent_contacts import AgentContacts
from crax.objects.placement import sample_layout
from crax.objects.safety_zones import SafetyGymGoal
from crax.objects.static_geoms import StaticBox, StaticGeoms
from crax.suites.safety_gym.base import SAFETY_GYM_PARAMS
from crax.suites.safety_gym.goal import GOAL_REWARDS, SafetyGoal

FACTOR = 3.5
"""Safety-Gymnasium's ``palcement_cal_factor``: Race's placements are written in units of it."""

AGENT_BOX = {0: (-0.65 * FACTOR, 0.3 * FACTOR, 0.05 * FACTOR, 0.1 * FACTOR),
             1: (-0.65 * FACTOR, 0.3 * FACTOR, 0.05 * FACTOR, 0.1 * FACTOR),
             2: (-0.65 * FACTOR, -0.8 * FACTOR, 0.05 * FACTOR, 0.05 * FACTOR)}
"""The rectangle the agent starts in, by level: centre (x, y), width, length (``agent.placements``)."""

GOAL_XY = (0.9 * FACTOR, 0.3 * FACTOR)
"""The goal's fixed location (``goal.locations``)."""

HAZARD_BOXES = tuple(((-0.45 + 0.2 * i) * FACTOR, (0.3 - 0.09 * (-1) ** i) * FACTOR) for i in range(7))
"""Centres of the 7 rectangles (0.6 × 0.7 m) the hazards are drawn from (``hazards.placements``)."""
HAZARD_BOX_HALF = (0.3, 0.35)

RACE_WALLS = (
    StaticBox("race_wall1_down", -2.8084, -2.0559, 0.1160, 1.2545, 0.0129, 1.217),
    StaticBox("race_wall1_up", -2.8084, 0.3991, 0.1160, 1.2545, 0.0129, 1.217),
    StaticBox("race_wall2_left", -1.0063, 1.7585, 1.2545, 0.1160, 0.0139, 1.216),
    StaticBox("race_wall22_right", 1.7937, 1.7585, 1.2545, 0.1160, 0.0139, 1.216),
    StaticBox("race_wall3", 0.2168, -0.1881, 2.9570, 0.7760, -0.0030, 0.789),
    StaticBox("race_wall4", 0.6435, -2.4697, 2.4146, 2.3029, 0.0123, 2.302),
    StaticBox("race_wall5", -2.3100, -3.4991, 0.5600, 0.0628, -0.0016, 2.136),
    StaticBox("small_stone1", -2.4492, 2.1007, 0.4710, 0.3008, -0.0465, 0.284),
    StaticBox("small_stone2", 0.3537, 2.0998, 0.2973, 0.2703, 0.0731, 0.479),
)
"""``configs/race.yaml``'s static geoms as crax collides with them: each mesh's convex hull (what
MuJoCo collides with) cut at the agents' height (0.1 m) and boxed by the smallest rectangle holding
that cut, standing from the floor to the hull's top (fitted by ``tools/safety_gymnasium/sg_reference_race.py``
from Safety-Gymnasium's own model). docs/safety_gymnasium.md ("Race") says why and how close."""


def race_walls(level: int) -> tuple[StaticBox, ...]:
    """The static geoms at ``level``: the same nine at every level; at level 2 ``race_wall3`` stands 0.5 m further +x."""
    return tuple(b.moved(dx=0.5) if level >= 2 and b.name == "race_wall3" else b for b in RACE_WALLS)


class SafetyRace(SafetyGoal):
    """Reach a fixed goal along a walled course; Safety-Gymnasium's Race.

    The course is nine static walls and rocks (:data:`RACE_WALLS`; at level 2 ``race_wall3``
    moves 0.5 m), on a floor 17.5 m each way. The agent starts in a small rectangle at the course's
    west end (level 2: its south-west corner, behind the walls) with a uniform yaw; the goal
    (radius 0.3) stands at (3.15, 1.05). The reward is Goal's, with a goal bonus of 10 and a clip of
    ±11; reaching the goal ends the episode (``continue_goal`` off). Level 1 and 2: 7 hazards of
    radius 0.2625 (keepout 0.165), each drawn in one of 7 rectangles along the corridor, and each
    contact point between the agent and a wall costs ``static_geoms_contact_cost`` (1;
    ``cost/static_geoms_contact``). Observation: the body's readings, goal lidar, hazards lidar
    (levels 1-2). 500 steps.

    Args:
      body: a Safety-Gymnasium navigation body.
      level: 0, 1 or 2.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyRace"
    task = "Race"
    episode_length = 500
    agent_keepout = 0.0
    floor_size = 17.5
    continue_goal = False
    reward_clip = 11.0
    params = {
        "hazards": Param(valid=COUNT, doc="number of hazards", levels={0: 0, 1: 7, 2: 7}),
        "hazard_size": Param(0.075 * FACTOR, POSITIVE, "radius of the hazards (m)"),
        "hazard_keepout": Param(0.165, NON_NEGATIVE, "placement clearance of the hazards (m)"),
        "goal_size": SafetyGoal.params["goal_size"],
        "goal_keepout": SafetyGoal.params["goal_keepout"],
        "reward_distance": GOAL_REWARDS["reward_distance"],
        "reward_goal": dataclasses.replace(GOAL_REWARDS["reward_goal"], default=10.0),
        "static_geoms_contact_cost": Param(valid=NON_NEGATIVE, levels={0: 0.0, 1: 1.0, 2: 1.0},
                                           doc="raw cost per contact point between the agent and a wall, "
                                               "cost_static_geoms_contact (0: no such term)"),
        **{k: SAFETY_GYM_PARAMS[k] for k in ("lidar_bins", "lidar_max_dist", "hazard_cost", "num_candidates")},
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        objects = {"goal": SafetyGymGoal(v.goal_size, keepout=v.goal_keepout),
                   "hazards": self.hazard_zones(v.hazards, v.hazard_size, v.hazard_keepout)}
        self._setup_objects(body, level, objects, v, extent=0.0, lidar=("goal", "hazards"))
        self.walls = StaticGeoms(race_walls(level))
        if v.static_geoms_contact_cost > 0:
            self.constraints.append(AgentContacts(self.walls, contact_cost=v.static_geoms_contact_cost,
                                                  term="static_geoms_contact"))
        self.agent_box = AGENT_BOX[level]
        self.goal_size = TaskParam(jnp.asarray(v.goal_size, jnp.float32))
        self.reward_distance = TaskParam(jnp.asarray(v.reward_distance, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))

    def build(self, spec: mujoco.MjSpec) -> None:
        super().build(spec)
        self.walls.build(spec)

    def bind(self, m: mujoco.MjModel) -> None:
        self.walls.bind(m)
        super().bind(m)

    def draw_layout(self, key: jax.Array, keepout: jax.Array) -> jax.Array:
        """The agent uniform in its rectangle, the goal at its location, then each hazard at the
        first of ``num_candidates`` draws (a rectangle of the 7 at random, then a point in it shrunk
        by the keepout) that keeps clear of the agent, the goal and the hazards before it."""
        k_agent, k_hazards = jax.random.split(key)
        cx, cy, w, h = self.agent_box
        agent = jax.random.uniform(k_agent, (2,), minval=jnp.asarray([cx - w / 2, cy - h / 2]),
                                   maxval=jnp.asarray([cx + w / 2, cy + h / 2]))
        goal = jnp.asarray(GOAL_XY, jnp.float32)
        n = keepout.shape[0] - 2
        if n == 0:
            return jnp.stack([agent, goal])
        centres = jnp.asarray(HAZARD_BOXES, jnp.float32)
        half = jnp.asarray(HAZARD_BOX_HALF, jnp.float32) - keepout[2]

        def candidates(k, count):
            k_box, k_xy = jax.random.split(k)
            box = jax.random.randint(k_box, (count,), 0, centres.shape[0])
            return centres[box] + jax.random.uniform(k_xy, (count, 2), minval=-half, maxval=half)

        fixed = jnp.stack([jnp.concatenate([agent, keepout[:1]]), jnp.concatenate([goal, keepout[1:2]])])
        hazards = sample_layout(k_hazards, keepout[2:], 0.0, num_candidates=self.num_candidates, fixed=fixed,
                                candidates=candidates)
        return jnp.concatenate([agent[None], goal[None], hazards])

