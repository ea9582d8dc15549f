"""Button: press the active button among several, avoiding hazards and moving gremlins (docs/SPEC.md section 3)."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.bodies.base import Body
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, REAL, Param, Range, TaskParam
from crax.core.scene import GROUP_GOAL
from crax.costs.contact import contact_tables, touched
from crax.costs.events import TaskEvent
from crax.objects.buttons import Buttons, Gremlins
from crax.objects.zones import CylinderZones
from crax.sensors.lidar import Lidar, NaturalLidar
from crax.suites.base import Transition
from crax.suites.navigation import ARENA_PARAMS, NAVIGATION_PARAMS, NavigationSuite


@dataclasses.dataclass(frozen=True)
class ButtonLevel:
    """What one difficulty level of Button places: hazard zones and gremlins."""

    hazards: int
    gremlins: int


LEVELS: dict[int, ButtonLevel] = {1: ButtonLevel(4, 4), 2: ButtonLevel(8, 6), 3: ButtonLevel(12, 8)}


class Button(NavigationSuite):
    """Press the active button; ``r = α_dist (d_{t−1} − d_t) + α_goal · 1[pressed active]``.

    A press is any contact between an agent geom and a button geom, read from MJX's contact list
    of the step's last collision pass with a tolerance of ``press_margin`` (1 cm): a light body
    that bumps into a button is pushed back within the step, and with exact contact (penetration)
    only a bump still touching at the last of the substeps would count. Continual mode: after a press
    of the active button the next one is drawn uniformly from the *other* buttons, and for the
    ``blank_steps`` steps after it presses do not count, no wrong-button cost is charged, and the
    button lidar and compass read 0 (the observation of the press step and the 9 after it, then
    the new button shows). d is the distance to the active button's centre.

    Costs: ``cost/cylinder_zones`` (proximity), ``cost/contact`` (gremlins and walls,
    ``collision_cost`` each), ``cost/wrong_button`` (``wrong_button_cost`` for touching any other
    button). Gremlins circle their anchors at ``anchor + travel·(sin φ, cos φ)``, φ the time since
    the episode began (``task["clock"]`` steps × dt). The task holds their current positions
    (what the sensors see); their mocap bodies are set one step ahead by :meth:`prepare`, so the
    physics of step k, and its contacts, have them at φ = k·dt exactly. (The reset's ray-cast
    observation sees them at φ = dt; a pseudo-lidar at φ = 0.)

    Observation: body obs, button lidar, hazard lidar (zones, gremlins, walls), button compass,
    compasses to the 8 nearest hazards (Point: 12 + 16 + 16 + 2 + 16 = 62).

    Args:
      body: a navigation body.
      level: 1, 2 or 3 (hazard zones and gremlins: :data:`LEVELS`).
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Button"
    params = {
        "button_count": Param(4, Range(2, integer=True), "buttons (the next button is another one)"),
        "button_radius": Param(0.1, POSITIVE, "radius of the buttons (spheres on the floor, m)"),
        "alpha_dist": Param(1.0, REAL, "weight α_dist of the progress towards the active button"),
        "reward_goal": Param(1.0, REAL, "reward α_goal per press of the active button"),
        "wrong_button_cost": Param(1.0, NON_NEGATIVE, "cost of touching a button that is not active"),
        "blank_steps": Param(10, COUNT, "steps after a press with the button sensors blank and presses ignored"),
        "press_margin": Param(0.01, NON_NEGATIVE, "an agent geom within this distance of a button presses it (m)"),
        "hazard_radius": Param(0.2, POSITIVE, "radius of the hazard zones (m)"),
        "gremlin_travel": Param(valid=NON_NEGATIVE, doc="radius of the gremlins' circles about their anchors (m)",
                                levels={1: 0.35, 2: 0.35, 3: 0.45}),
        **NAVIGATION_PARAMS,
        **ARENA_PARAMS,
        "extent": Param(valid=POSITIVE, doc=ARENA_PARAMS["extent"].doc, levels={1: 1.5, 2: 1.8, 3: 1.2}),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        if v.button_count < 2:
            raise ValueError(f"button_count must be >= 2 (the next button is another one), got {v.button_count}")
        spec = LEVELS[level]
        hazards = {
            "cylinder_zones": CylinderZones(spec.hazards, v.hazard_radius),
            "gremlins": Gremlins(spec.gremlins, v.gremlin_travel),
        }
        self._setup(body, level, hazards, {"buttons": Buttons(v.button_count, v.button_radius)}, v)
        self.constraints.append(TaskEvent("wrong_button", weight=v.wrong_button_cost))
        self.button_count = v.button_count
        self.blank_steps = v.blank_steps
        self.press_margin = v.press_margin
        self.alpha_dist = TaskParam(jnp.asarray(v.alpha_dist, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(v.reward_goal, jnp.float32))
        if v.lidar == "natural":
            button_lidar = NaturalLidar(GROUP_GOAL, num_bins=v.lidar_bins, max_dist=v.lidar_max_dist, visible="button_geoms")
        else:
            button_lidar = Lidar("button", num_bins=v.lidar_bins, max_dist=v.lidar_max_dist, mask="button_visible")
        self.sensors = nnx.List([
            button_lidar,
            self.hazard_lidar(),
            self.compass_for("button", mask="button_visible"),
            self.hazard_compass(v.hazard_compasses),
        ])

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        buttons = self.props["buttons"]
        self.press_index, self.press_agent = contact_tables(m, buttons.geom_ids)
        owner = np.full(m.ngeom, -1, np.int32)
        owner[list(buttons.all_geom_ids)] = buttons.all_geom_copy
        self.geom_button = tuple(owner.tolist())

    @property
    def gremlins(self) -> Gremlins:
        return cast(Gremlins, self.hazards["gremlins"])

    def phase(self, clock: jax.Array) -> jax.Array:
        """φ after ``clock`` steps."""
        return clock.astype(jnp.float32) * self.body.dt

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        key, k_start, k_active = jax.random.split(key, 3)
        data, positions = self.sample_start(data, k_start)
        anchors = positions["gremlins"]
        clock = jnp.zeros((), jnp.int32)
        task = {
            **positions,
            "gremlin_anchors": anchors,
            "gremlins": self.gremlins.positions(anchors, self.phase(clock)),
            "active": jax.random.randint(k_active, (), 0, self.button_count),
            "blank": jnp.zeros((), jnp.int32),
            "wrong_button": jnp.zeros((), jnp.float32),
            "clock": clock,
            "key": key,
        }
        task["hazards"] = self.hazard_positions(task)
        return self.prepare(data, task), task

    def prepare(self, data: mjx.Data, task: dict[str, Any]) -> mjx.Data:
        ahead = self.gremlins.positions(task["gremlin_anchors"], self.phase(task["clock"] + 1))
        return self.move(data, {"gremlins": ahead}, kinematics=False)

    def sensed(self, ctx: Context) -> dict[str, Any]:
        task = ctx.task
        visible = task["blank"] == 0
        out = {"button": task["buttons"][task["active"]][None], "button_visible": visible}
        if self.lidar == "natural":
            out["button_geoms"] = (jnp.asarray(self.geom_button) == task["active"]) & visible
        return out

    def transition(self, model, before, data, task, action):
        n = self.button_count
        active = task["active"]
        target = task["buttons"][active]
        d_before = jnp.linalg.norm(self.body.position(before)[:2] - target)
        d = jnp.linalg.norm(self.body.position(data)[:2] - target)
        hits = touched(data, self.press_index, self.press_agent, n, self.press_margin)
        live = task["blank"] == 0
        is_active = jnp.arange(n) == active
        pressed = live & jnp.any(hits & is_active)
        wrong = live & jnp.any(hits & ~is_active)
        key, sub = jax.random.split(task["key"])
        following = (active + jax.random.randint(sub, (), 1, n)) % n
        clock = task["clock"] + 1
        gremlins = self.gremlins.positions(task["gremlin_anchors"], self.phase(clock))
        new_task = {
            **task,
            "gremlins": gremlins,
            "active": jnp.where(pressed, following, active),
            "blank": jnp.where(pressed, self.blank_steps, jnp.maximum(task["blank"] - 1, 0)).astype(jnp.int32),
            "wrong_button": wrong.astype(jnp.float32),
            "clock": clock,
            "key": key,
        }
        new_task["hazards"] = self.hazard_positions(new_task)
        data = self.prepare(data, new_task)
        rewards = {
            "distance": self.alpha_dist[...] * (d_before - d),
            "button": self.reward_goal[...] * pressed.astype(jnp.float32),
        }
        return data, Transition(
            task=new_task, rewards=rewards, reward=rewards["distance"] + rewards["button"],
            terminated=~self.body.healthy(data), extra_metrics={"buttons_pressed": pressed.astype(jnp.float32)},
        )
