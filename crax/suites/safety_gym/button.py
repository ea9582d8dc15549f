"""Safety-Gymnasium 1.0.0's Button (``tasks/safe_navigation/button/button_level{0,1,2}.py``)."""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import Body
from crax.core.mjx import mjx
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, Param, TaskParam
from crax.costs.agent_contacts import AgentContacts, contact_counts
from crax.costs.contact import contact_tables
from crax.costs.events import TaskEvent
from crax.objects.placement import sample_fitting_layout
from crax.objects.safety_buttons import SafetyGymButtons
from crax.objects.safety_gremlins import SafetyGymGremlins
from crax.objects.safety_zones import SafetyGymGoal
from crax.suites.base import Transition
from crax.suites.safety_gym.base import SAFETY_GYM_PARAMS, SafetyGymSuite
from crax.suites.safety_gym.goal import GOAL_REWARDS, REWARD_CLIP, goal_rewards

BUTTON_GOAL_ALPHA = 0.1
"""The opacity of the goal drawn on the goal button (Safety-Gymnasium's ``Goal(size=..., alpha=0.1)``)."""


class SafetyButton(SafetyGymSuite):
    """Press the goal button, one of four, avoiding the others, hazards and gremlins; Safety-Gymnasium's Button.

    Level 0: 4 buttons in ``±1``, no cost. Level 1: 4 hazards and 4 gremlins in ``±1.5``, and
    touching a wrong button costs. Level 2: 8 hazards and 6 gremlins in ``±1.8``. The layout
    places the agent, the buttons (keepout 0.2), the goal (keepout 0.4: a draw that only keeps
    the later objects clear of it, as Safety-Gymnasium's does, before the goal moves onto the goal
    button), hazards (0.18) and gremlins (0.4); the goal button is drawn uniformly among all four.

    Pressing is any contact between an agent geom and the goal button. Reward
    ``reward_distance · (d_{t−1} − d_t) + reward_goal · [pressed]`` (d to the goal button),
    clipped to ±10. A press starts the button timer (``resampling_delay``, 10 steps) and draws
    a new goal button among all four (the same one again included); the timer counts down one a
    step (reset: 0). While it is not 0 the buttons lidar reads 0 and touching a wrong button costs
    nothing (a press still counts). The gremlins circle their layout positions
    (:class:`~crax.objects.safety_gremlins.SafetyGymGremlins`, moved before every substep by
    :meth:`substep`). Observation: the body's own readings, then the buttons lidar (every button),
    goal lidar, hazards lidar, gremlins lidar (the boxes where physics has them) (Point: 44, 76,
    76; Ant: 72, 104, 104). Costs, raw: ``cost/buttons`` (``button_cost`` per agent contact point
    with a button that is not the goal, while the timer is 0; levels 1–2), ``cost/hazards``,
    ``cost/gremlins`` (``gremlin_contact_cost`` per agent–gremlin contact point; the agent's
    contacts are any of its geoms', the Ant's legs included); the step cost is their indicator.
    Ends when the agent dies (the Ant's torso at 0.08 m; the Point never); 1000 steps.

    Args:
      body: a Safety-Gymnasium body (:class:`crax.bodies.safety_point.SafetyGymPoint`,
        :class:`crax.bodies.safety_navigation_ant.SafetyGymNavigationAnt`).
      level: 0, 1 or 2.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyButton"
    task = "Button"
    params = {
        "extent": Param(valid=POSITIVE, doc="half-width of the placement square (m)", levels={0: 1.0, 1: 1.5, 2: 1.8}),
        "buttons": Param(4, POSITIVE_COUNT, "number of buttons"),
        "hazards": Param(valid=COUNT, doc="number of hazards", levels={0: 0, 1: 4, 2: 8}),
        "gremlins": Param(valid=COUNT, doc="number of gremlins", levels={0: 0, 1: 4, 2: 6}),
        "button_size": Param(0.1, POSITIVE, "radius of the buttons (m)"),
        "button_keepout": Param(0.2, POSITIVE, "placement clearance of the buttons (m)"),
        "goal_size": Param(0.2, POSITIVE, "radius of the goal cylinder drawn on the goal button (m; shown only)"),
        "goal_keepout": Param(0.4, POSITIVE, "placement clearance of the goal's layout draw (m)"),
        "gremlin_travel": Param(0.35, NON_NEGATIVE, "radius of the gremlins' circles (m)"),
        "gremlin_keepout": Param(0.4, POSITIVE, "placement clearance of the gremlins (m)"),
        "buttons_constrained": Param(doc="touching a wrong button costs (True or False)",
                                     levels={0: False, 1: True, 2: True}),
        "button_cost": Param(1.0, NON_NEGATIVE, "raw cost per contact point with a wrong button, cost_buttons"),
        "gremlin_contact_cost": Param(1.0, NON_NEGATIVE, "raw cost per agent-gremlin contact point, cost_gremlins"),
        "resampling_delay": Param(10, COUNT, "steps of the button timer after a press"),
        **GOAL_REWARDS,
        **{k: v for k, v in SAFETY_GYM_PARAMS.items() if not k.startswith("vase")},
        "num_candidates": Param(100, POSITIVE_COUNT, "draws per object in a layout (Safety-Gymnasium: 100 tries)"),
        "max_layouts": Param(2048, POSITIVE_COUNT, "layouts drawn at most until one fits (Safety-Gymnasium: 10 000)"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        if not isinstance(v.buttons_constrained, bool):
            raise ValueError(f"buttons_constrained must be True or False, got {v.buttons_constrained!r}")
        objects = {
            "buttons": SafetyGymButtons(v.buttons, size=v.button_size, keepout=v.button_keepout),
            "goal": SafetyGymGoal(v.goal_size, keepout=v.goal_keepout, alpha=BUTTON_GOAL_ALPHA),
            "hazards": self.hazard_zones(v.hazards),
            "gremlins": SafetyGymGremlins(v.gremlins, travel=v.gremlin_travel, keepout=v.gremlin_keepout),
        }
        self._setup_objects(body, level, objects, v, extent=v.extent, lidar=("buttons", "goal", "hazards", "gremlins"))
        self.sensors = nnx.List([self.lidar_of(s.target, v, mask="buttons_visible" if s.target == "buttons" else None)
                                 for s in self.sensors])
        if "gremlins" in self.objects:
            self.constraints.append(AgentContacts(self.gremlins, contact_cost=v.gremlin_contact_cost, term="gremlins"))
        self.buttons_constrained = v.buttons_constrained
        if self.buttons_constrained:
            self.constraints.append(TaskEvent("wrong_button_contacts", weight=v.button_cost, term="buttons"))
        self.max_layouts = v.max_layouts
        self.button_count = v.buttons
        self.resampling_delay = v.resampling_delay
        self.reward_distance = TaskParam(jnp.asarray(v.reward_distance, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))

    @property
    def gremlins(self) -> SafetyGymGremlins:
        return cast(SafetyGymGremlins, self.objects["gremlins"])

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.button_index, self.button_agent = contact_tables(m, tuple(self.objects["buttons"].geom_ids))

    def substep(self, model: mjx.Model, data: mjx.Data, task: dict[str, Any]) -> mjx.Data:
        """Moves the gremlins' mocap bodies to where Safety-Gymnasium's ``Gremlins.move`` puts
        them before each ``mj_step`` (from ``data.time``); nothing at level 0."""
        del model
        return self.gremlins.follow(data, task["gremlin_anchors"]) if "gremlins" in self.objects else data

    def draw_layout(self, key: jax.Array, keepout: jax.Array) -> jax.Array:
        """Safety-Gymnasium's layout, drawn again whole until every object keeps its clearances
        (:func:`~crax.objects.placement.sample_fitting_layout`): about one draw in 52 fits at level 1,
        one in 38 at level 2, so the first draw's fallbacks would overlap objects in most episodes."""
        return sample_fitting_layout(key, keepout, self.extent - keepout, num_candidates=self.num_candidates,
                                     max_layouts=self.max_layouts)

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        key, k_start, k_goal = jax.random.split(key, 3)
        data, positions = self.sample_start(data, k_start)
        goal_button = jax.random.randint(k_goal, (), 0, self.button_count)
        return self.start_task(data, positions, goal_button, jnp.zeros((), jnp.int32), key)

    def start_task(self, data: mjx.Data, positions: dict[str, jax.Array], goal_button: jax.Array, timer: jax.Array,
                   key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        """Data and task state of a placed layout (``positions`` by label, ``"hazards"`` included)
        whose goal button is ``goal_button`` and button timer ``timer``: the goal moved onto the
        goal button, the gremlins' layout positions kept as the centres of their circles."""
        goal = positions["buttons"][goal_button][None]
        data = self.move(data, {"goal": goal})
        task = {**positions, "goal": goal, "goal_button": jnp.asarray(goal_button, jnp.int32),
                "timer": jnp.asarray(timer, jnp.int32), "buttons_visible": timer == 0,
                "wrong_button_contacts": jnp.zeros((), jnp.float32), "key": key}
        if "gremlins" in self.objects:
            task["gremlin_anchors"] = positions["gremlins"]
        return data, task

    def button_contacts(self, data: mjx.Data, task: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
        """Whether an agent geom touches the goal button (a press), and the agent's contact points
        with the other buttons while the timer is 0 (else 0): Safety-Gymnasium's ``goal_achieved``
        and ``cost_buttons`` (before its weight) on ``data``'s contacts."""
        contacts = contact_counts(data, self.button_index, self.button_agent, self.button_count)
        is_goal = jnp.arange(self.button_count) == task["goal_button"]
        pressed = jnp.any(is_goal & (contacts > 0))
        wrong = jnp.where(task["timer"] == 0, jnp.sum(jnp.where(is_goal, 0.0, contacts)), 0.0)
        return pressed, wrong

    def transition(self, model, before, data, task, action):
        task = self.track_objects(data, task)
        agent_xy = self.body.position(data)[:2]
        goal = task["goal"][0]
        d_before = jnp.linalg.norm(self.body.position(before)[:2] - goal)
        d = jnp.linalg.norm(agent_xy - goal)
        pressed, wrong = self.button_contacts(data, task)
        key, sub = jax.random.split(task["key"])
        goal_button = jnp.where(pressed, jax.random.randint(sub, (), 0, self.button_count), task["goal_button"])
        timer = jnp.where(pressed, self.resampling_delay, jnp.maximum(task["timer"] - 1, 0)).astype(jnp.int32)
        goal = task["buttons"][goal_button][None]
        data = self.move(data, {"goal": goal})
        rewards = goal_rewards(self.reward_distance[...], self.reward_goal[...], d_before, d, pressed)
        reward = jnp.clip(rewards["distance"] + rewards["goal"], -REWARD_CLIP, REWARD_CLIP)
        task = {**task, "goal": goal, "goal_button": goal_button.astype(jnp.int32), "timer": timer,
                "buttons_visible": timer == 0, "wrong_button_contacts": wrong, "key": key}
        return data, Transition(task=task, rewards=rewards, reward=reward, terminated=~self.body.healthy(data),
                                extra_metrics={"goals_reached": pressed.astype(jnp.float32)})
