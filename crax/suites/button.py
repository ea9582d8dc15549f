"""Button: press the active button among several, avoiding hazards and moving gremlins (docs/SPEC.md section 3)."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, cast

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.bodies.base import Body
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, REAL, Range, TaskParam
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
    """One difficulty level of Button: hazard zones, gremlins, layout extent, gremlin travel."""

    hazards: int
    gremlins: int
    extent: float
    travel: float


LEVELS: dict[int, ButtonLevel] = {
    1: ButtonLevel(4, 4, 1.5, 0.35),
    2: ButtonLevel(8, 6, 1.8, 0.35),
    3: ButtonLevel(12, 8, 1.2, 0.45),
}


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
      level: 1, 2 or 3.
      button_count, button_radius: the buttons (spheres on the floor).
      alpha_dist, reward_goal: reward weights.
      wrong_button_cost: cost of touching a button that is not active.
      blank_steps: steps after a press with the button sensors blank and presses ignored.
      press_margin: an agent geom within this distance of a button presses it.
      hazard_radius: radius of the hazard zones.
      cost_scale, collision_cost: zone weight, cost per gremlin or wall in contact.
      gremlin_travel: overrides the level's travel.
      lidar, lidar_bins, lidar_max_dist, hazard_compasses: as Goal.
      extent: layout half-extent (the level's by default); walls stand at ``wall_extent``.
      num_candidates: layout candidates per object.
    """

    name = "Button"
    params = {
        **NAVIGATION_PARAMS,
        **ARENA_PARAMS,
        "button_count": Range(2, integer=True),  # the next button is another one
        "button_radius": POSITIVE,
        "alpha_dist": REAL,
        "reward_goal": REAL,
        "wrong_button_cost": NON_NEGATIVE,
        "blank_steps": COUNT,
        "press_margin": NON_NEGATIVE,
        "hazard_radius": POSITIVE,
        "gremlin_travel": NON_NEGATIVE,
    }

    @classmethod
    def level_params(cls, level: int) -> dict[str, Any]:
        return {"extent": LEVELS[level].extent, "gremlin_travel": LEVELS[level].travel}

    def __init__(
        self,
        body: Body,
        level: int,
        *,
        button_count: int = 4,
        button_radius: float = 0.1,
        alpha_dist: float = 1.0,
        reward_goal: float = 1.0,
        wrong_button_cost: float = 1.0,
        blank_steps: int = 10,
        press_margin: float = 0.01,
        hazard_radius: float = 0.2,
        cost_scale: float = 2.0,
        collision_cost: float = 3.0,
        gremlin_travel: float | None = None,
        lidar: Literal["pseudo", "natural"] = "pseudo",
        lidar_bins: int = 16,
        lidar_max_dist: float = 3.0,
        hazard_compasses: int = 8,
        extent: float | None = None,
        wall_extent: float = 3.0,
        num_candidates: int = 64,
    ):
        if button_count < 2:
            raise ValueError(f"button_count must be >= 2 (the next button is another one), got {button_count}")
        spec = LEVELS[level]
        travel = spec.travel if gremlin_travel is None else gremlin_travel
        hazards = {
            "cylinder_zones": CylinderZones(spec.hazards, hazard_radius),
            "gremlins": Gremlins(spec.gremlins, travel),
        }
        self._setup(
            body, level, hazards, {"buttons": Buttons(button_count, button_radius)},
            cost_scale=cost_scale, collision_cost=collision_cost, lidar=lidar, lidar_bins=lidar_bins,
            lidar_max_dist=lidar_max_dist, extent=spec.extent if extent is None else extent,
            wall_extent=wall_extent, num_candidates=num_candidates,
        )
        self.constraints.append(TaskEvent("wrong_button", weight=wrong_button_cost))
        self.button_count = button_count
        self.blank_steps = blank_steps
        self.press_margin = press_margin
        self.alpha_dist = TaskParam(jnp.asarray(alpha_dist, jnp.float32))
        self.reward_goal = TaskParam(jnp.asarray(reward_goal, jnp.float32))
        if lidar == "natural":
            button_lidar = NaturalLidar(GROUP_GOAL, num_bins=lidar_bins, max_dist=lidar_max_dist, visible="button_geoms")
        else:
            button_lidar = Lidar("button", num_bins=lidar_bins, max_dist=lidar_max_dist, mask="button_visible")
        self.sensors = nnx.List([
            button_lidar,
            self.hazard_lidar(),
            self.compass_for("button", mask="button_visible"),
            self.hazard_compass(hazard_compasses),
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
