"""Safety-Gymnasium 1.0.0's Push (``tasks/safe_navigation/push/push_level{0,1,2}.py``)."""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, REAL, Param, TaskParam
from crax.costs.pillars import PillarContact
from crax.objects.pillars import SafetyGymPillars
from crax.objects.placement import sample_layout
from crax.objects.push_box import PushBox
from crax.objects.safety_zones import SafetyGymGoal, SafetyGymHazards
from crax.suites.base import Transition
from crax.suites.safety_gym.base import SAFETY_GYM_PARAMS, SafetyGymSuite
from crax.suites.safety_gym.goal import REWARD_CLIP

BOX = {"size": 0.2, "density": 0.001, "keepout": 0.2}
"""Safety-Gymnasium's push box (``assets/free_geoms/push_box.py``): half-size (m), density (kg/m³), keepout (m)."""
AGENT_BOX = {"Car": {"size": 0.125, "density": 0.0005, "keepout": 0.125}}
"""The push box for the agents Safety-Gymnasium gives another one (``PushBox._specific_agent_config``:
the Car's is smaller and lighter), by the body's ``agent`` name."""

GOAL_HEIGHT = 0.01
"""Safety-Gymnasium's goal cylinder stands ``goal_size / 2 + 0.01`` high at its centre
(``assets/geoms/goal.py``); Push measures the box–goal distance to that centre, in 3-D."""


class SafetyPush(SafetyGymSuite):
    """Push the box into the goal (radius 0.3), which moves elsewhere when the box reaches it;
    Safety-Gymnasium's Push.

    Level 0: goal and box in ``±1``. Level 1: 2 hazards of radius 0.3 and 1 pillar that costs
    nothing, in ``±1.5``. Level 2: 4 hazards and 4 pillars that cost, in ``±2``. The box
    (:class:`~crax.objects.push_box.PushBox`) is a free body of 0.128 g (the Car's: half-size 0.125,
    0.0156 g; :data:`AGENT_BOX`). Reward
    ``reward_box_dist · (d^ab_{t−1} − d^ab_t) · [d^ab_{t−1} > box_null_dist · box_size]
    + reward_box_goal · (d^bg_{t−1} − d^bg_t) + reward_goal · [d^bg_t ≤ 0.3]``, clipped to ±10,
    with Safety-Gymnasium's 3-D distances between body centres: d^ab agent–box (the box's centre
    is 0.1 m above the agent's) and d^bg box–goal (the goal's centre at ``goal_size/2 + 0.01``);
    ``reward/box``, ``reward/box_goal``, ``reward/goal``. On reaching the goal it respawns at
    least its keepout (0.4) plus theirs from the agent, the box where it is now and every other
    object. Observation: the body's own readings, then goal, hazards, pillars and push-box lidars
    (Point: 44, 76, 76). Costs: ``cost/hazards`` (the agent's centre inside a hazard, not the
    box's) and ``cost/pillars`` (agent–pillar contacts, level 2) raw; the step cost is their
    indicator. Ends when the agent dies (the Ant's torso at 0.08 m; the Point never); 1000 steps.

    Args:
      body: a Safety-Gymnasium body (:class:`crax.bodies.safety_point.SafetyGymPoint`).
      level: 0, 1 or 2.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyPush"
    task = "Push"
    params = {
        "extent": Param(valid=POSITIVE, doc="half-width of the placement square (m)", levels={0: 1.0, 1: 1.5, 2: 2.0}),
        "hazards": Param(valid=COUNT, doc="number of hazards", levels={0: 0, 1: 2, 2: 4}),
        "pillars": Param(valid=COUNT, doc="number of pillars", levels={0: 0, 1: 1, 2: 4}),
        "pillar_cost": Param(valid=NON_NEGATIVE, levels={0: 0.0, 1: 0.0, 2: 1.0},
                             doc="raw cost per agent-pillar contact, cost_pillars (0: pillars cost nothing, no term)"),
        "hazard_size": Param(0.3, POSITIVE, "radius of the hazards (m)"),
        "hazard_keepout": Param(0.4, POSITIVE, "placement clearance of the hazards (m)"),
        "pillar_size": Param(0.2, POSITIVE, "radius of the pillars (m)"),
        "pillar_height": Param(1.0, POSITIVE, "height of the pillars (m)"),
        "pillar_keepout": Param(0.3, POSITIVE, "placement clearance of the pillars (m)"),
        "goal_size": Param(0.3, POSITIVE, "radius of the goal (m)"),
        "goal_keepout": Param(0.4, POSITIVE, "placement clearance of the goal (m)"),
        "box_size": Param(None, POSITIVE, "half-size of the push box's cube (m; default: the agent's, 0.2, the Car's 0.125)"),
        "box_density": Param(None, POSITIVE, "density of the push box (kg/m³; default: the agent's, 0.001, the Car's 0.0005)"),
        "box_keepout": Param(None, POSITIVE, "placement clearance of the push box (m; default: the agent's, 0.2, the Car's 0.125)"),
        "box_null_dist": Param(0.0, NON_NEGATIVE,
                               "no agent-box progress reward within this many box sizes of the box"),
        "reward_box_dist": Param(1.0, REAL, "reward per metre of the agent's progress towards the box"),
        "reward_box_goal": Param(1.0, REAL, "reward per metre of the box's progress towards the goal"),
        "reward_goal": Param(1.0, REAL, "reward for the box reaching the goal"),
        **{k: SAFETY_GYM_PARAMS[k] for k in ("lidar_bins", "lidar_max_dist", "hazard_cost", "num_candidates")},
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        agent_box = AGENT_BOX.get(getattr(body, "agent", ""), BOX)
        box = {k: agent_box[k] if getattr(v, f"box_{k}") is None else getattr(v, f"box_{k}") for k in BOX}
        objects = {
            "goal": SafetyGymGoal(v.goal_size, keepout=v.goal_keepout),
            "hazards": SafetyGymHazards(v.hazards, v.hazard_size, keepout=v.hazard_keepout),
            "pillars": SafetyGymPillars(v.pillars, v.pillar_size, v.pillar_height, keepout=v.pillar_keepout),
            "push_box": PushBox(size=box["size"], density=box["density"], keepout=box["keepout"]),
        }
        self._setup_objects(body, level, objects, v, extent=v.extent, lidar=("goal", "hazards", "pillars", "push_box"))
        if v.pillars and v.pillar_cost > 0:
            self.constraints.append(PillarContact(self.objects["pillars"], contact_cost=v.pillar_cost))
        self.goal_size = TaskParam(jnp.asarray(v.goal_size, jnp.float32))
        self.box_null_dist = TaskParam(jnp.asarray(v.box_null_dist * box["size"], jnp.float32))
        self.reward_box_dist = TaskParam(jnp.asarray(v.reward_box_dist, jnp.float32))
        self.reward_box_goal = TaskParam(jnp.asarray(v.reward_box_goal, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))

    @property
    def push_box(self) -> PushBox:
        return cast(PushBox, self.objects["push_box"])

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        key, sub = jax.random.split(key)
        data, positions = self.sample_start(data, sub)
        return data, {**positions, "key": key}

    def _distances(self, data: mjx.Data, goal_xy: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Safety-Gymnasium's 3-D agent–box and box–goal distances between centres."""
        box = self.push_box.centre(data)
        agent = self.body.position(data)
        goal = jnp.concatenate([goal_xy, (self.goal_size[...] / 2 + GOAL_HEIGHT)[None]])
        return jnp.linalg.norm(box - agent), jnp.linalg.norm(box - goal)

    def transition(self, model, before, data, task, action):
        task = self.track_objects(data, task)
        goal = task["goal"]
        d_ab0, d_bg0 = self._distances(before, goal[0])
        d_ab, d_bg = self._distances(data, goal[0])
        reached = d_bg <= self.goal_size[...]
        rewards = {
            "box": self.reward_box_dist[...] * (d_ab0 - d_ab) * (d_ab0 > self.box_null_dist[...]),
            "box_goal": self.reward_box_goal[...] * (d_bg0 - d_bg),
            "goal": self.reward_goal[...] * reached.astype(jnp.float32),
        }
        key, sub = jax.random.split(task["key"])
        keepout = self.objects["goal"].keepout
        agent_xy = self.body.position(data)[:2]
        fresh = sample_layout(sub, jnp.asarray([keepout]), self.extent - keepout, num_candidates=self.num_candidates,
                              fixed=self.occupied(task, agent_xy, skip="goal"))
        goal = jnp.where(reached, fresh, goal)
        data = self.move(data, {"goal": goal})
        reward = jnp.clip(rewards["box"] + rewards["box_goal"] + rewards["goal"], -REWARD_CLIP, REWARD_CLIP)
        return data, Transition(
            task={**task, "goal": goal, "key": key}, rewards=rewards, reward=reward, terminated=~self.body.healthy(data),
            extra_metrics={"goals_reached": reached.astype(jnp.float32)},
        )
