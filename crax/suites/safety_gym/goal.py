"""Safety-Gymnasium 1.0.0's Goal (``tasks/safe_navigation/goal/goal_level{0,1,2}.py``)."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import COUNT, POSITIVE, REAL, Param, TaskParam
from crax.objects.placement import sample_layout
from crax.objects.safety_zones import SafetyGymGoal
from crax.suites.base import Transition
from crax.suites.safety_gym.base import SAFETY_GYM_PARAMS, SafetyGymSuite

REWARD_CLIP = 10.0
"""Safety-Gymnasium clips every step's reward to ±10 (``RewardConf.reward_clip``)."""

GOAL_REWARDS = {
    "reward_distance": Param(1.0, REAL, "reward per metre of progress towards the goal"),
    "reward_goal": Param(1.0, REAL, "reward for reaching the goal (Button: for pressing the goal button)"),
}
"""The weights of Safety-Gymnasium's goal rewards (``reward_conf``: Goal, Button, Race), :func:`goal_rewards`."""


def goal_rewards(reward_distance: jax.Array, reward_goal: jax.Array, d_before: jax.Array, d: jax.Array,
                 reached: jax.Array) -> dict[str, jax.Array]:
    """The goal rewards' terms: ``distance``, ``reward_distance · (d_{t−1} − d_t)`` (d the agent's distance
    to the goal before and after the step), and ``goal``, ``reward_goal`` where the goal was ``reached``."""
    return {"distance": reward_distance * (d_before - d), "goal": reward_goal * reached.astype(jnp.float32)}


class SafetyGoal(SafetyGymSuite):
    """Reach the goal (radius 0.3), which moves elsewhere when reached; Safety-Gymnasium's Goal.

    Level 0: the goal alone in ``±1``. Level 1: 8 hazards and 1 vase (no vase cost) in ``±1.5``.
    Level 2: 10 hazards and 10 vases (vases cost) in ``±2``. Reward
    ``reward_distance · (d_{t−1} − d_t) + reward_goal · [d_t ≤ 0.3]``, clipped to ±10; the goal
    respawns at least its keepout (0.305) plus theirs from the agent and every object where they
    are now. Observation: the body's own readings, goal lidar, hazards lidar, vases lidar
    (Point: 28, 60, 60; Ant: 56, 88, 88). Costs: ``cost/hazards``, ``cost/vases_contact``,
    ``cost/vases_velocity`` (level 2) raw; the step cost is their indicator. Ends when the agent
    dies (the Ant's torso at 0.08 m; the Point never); 1000 steps.

    Args:
      body: a Safety-Gymnasium navigation body (:class:`~crax.bodies.safety_point.SafetyGymPoint`,
        :class:`~crax.bodies.safety_navigation_ant.SafetyGymNavigationAnt`).
      level: 0, 1 or 2.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyGoal"
    task = "Goal"
    continue_goal: ClassVar[bool] = True
    """Whether a goal reached respawns (Safety-Gymnasium's ``mechanism_conf.continue_goal``); if not,
    reaching it ends the episode (its Race)."""
    reward_clip: ClassVar[float] = REWARD_CLIP
    """Each step's reward is clipped to ``±reward_clip`` (``reward_conf.reward_clip``)."""
    params = {
        "extent": Param(valid=POSITIVE, doc="half-width of the placement square (m)", levels={0: 1.0, 1: 1.5, 2: 2.0}),
        "hazards": Param(valid=COUNT, doc="number of hazards", levels={0: 0, 1: 8, 2: 10}),
        "vases": Param(valid=COUNT, doc="number of vases", levels={0: 0, 1: 1, 2: 10}),
        "goal_size": Param(0.3, POSITIVE, "radius of the goal (m)"),
        "goal_keepout": Param(0.305, POSITIVE, "placement clearance of the goal (m)"),
        **GOAL_REWARDS,
        **SAFETY_GYM_PARAMS,
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        objects = {"goal": SafetyGymGoal(v.goal_size, keepout=v.goal_keepout), "hazards": self.hazard_zones(v.hazards),
                   "vases": self.vases(v.vases)}
        self._setup_objects(body, level, objects, v, extent=v.extent, lidar=("goal", "hazards", "vases"))
        self.goal_size = TaskParam(jnp.asarray(v.goal_size, jnp.float32))
        self.reward_distance = TaskParam(jnp.asarray(v.reward_distance, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        key, sub = jax.random.split(key)
        data, positions = self.sample_start(data, sub)
        return data, {**positions, "key": key}

    def transition(self, model, before, data, task, action):
        task = self.track_objects(data, task)
        agent_xy = self.body.position(data)[:2]
        goal = task["goal"]
        d_before = jnp.linalg.norm(self.body.position(before)[:2] - goal[0])
        d = jnp.linalg.norm(agent_xy - goal[0])
        reached = d <= self.goal_size[...]
        key = task["key"]
        terminated = ~self.body.healthy(data)
        if self.continue_goal:
            key, sub = jax.random.split(key)
            keepout = self.objects["goal"].keepout
            fresh = sample_layout(sub, jnp.asarray([keepout]), self.extent - keepout, num_candidates=self.num_candidates,
                                  fixed=self.occupied(task, agent_xy, skip="goal"))
            goal = jnp.where(reached, fresh, goal)
            data = self.move(data, {"goal": goal})
        else:
            terminated = terminated | reached
        rewards = goal_rewards(self.reward_distance[...], self.reward_goal[...], d_before, d, reached)
        reward = jnp.clip(rewards["distance"] + rewards["goal"], -self.reward_clip, self.reward_clip)
        return data, Transition(
            task={**task, "goal": goal, "key": key}, rewards=rewards, reward=reward, terminated=terminated,
            extra_metrics={"goals_reached": reached.astype(jnp.float32)},
        )
