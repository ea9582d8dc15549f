"""`SafetyGymSuite`: what Safety-Gymnasium 1.0.0's navigation tasks share (``bases/base_task.py``)."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.bodies.base import SAFETY_GYM, Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, Param
from crax.costs.base import Constraint
from crax.costs.proximity import HazardProximity
from crax.costs.vases import VaseContact, VaseVelocity
from crax.objects.base import Placeable
from crax.objects.free_boxes import FreeBoxes
from crax.objects.placement import sample_layout
from crax.objects.push_box import PushBox
from crax.objects.safety_zones import SafetyGymHazards
from crax.objects.vases import Vases
from crax.objects.zones import CylinderZones
from crax.sensors.lidar import Lidar
from crax.suites.navigation import NavigationBase

VERSION = "v0"
"""The version Safety-Gymnasium 1.0.0 registers its navigation tasks under."""

SAFETY_GYM_PARAMS = {
    "lidar_bins": Param(16, POSITIVE_COUNT, "bins of each pseudo-lidar (Safety-Gymnasium: 16)"),
    "lidar_max_dist": Param(3.0, POSITIVE, "range of the pseudo-lidars (m; Safety-Gymnasium: 3)"),
    "hazard_cost": Param(1.0, NON_NEGATIVE, "raw hazard cost per metre inside a hazard, cost_hazards"),
    "vase_contact_cost": Param(1.0, NON_NEGATIVE, "raw cost per agent-vase contact, cost_vases_contact"),
    "vase_velocity_cost": Param(1.0, NON_NEGATIVE, "raw cost per m/s of vase speed, cost_vases_velocity"),
    "num_candidates": Param(64, POSITIVE_COUNT, "layout candidates per object (crax's vectorised placement)"),
}
"""The parameters every Safety-Gymnasium navigation task takes, declared once."""

HAZARD_SIZE = 0.2
"""Radius of Safety-Gymnasium's hazards (``assets/geoms/hazards.py``)."""

MOVED = (FreeBoxes, PushBox)
"""The kinds of Safety-Gymnasium's objects that physics moves (vases, gremlins, the push box): each is
placed with a uniform yaw, and the task state follows where physics has moved it."""


class SafetyGymSuite(NavigationBase):
    """A Safety-Gymnasium navigation task: no walls, objects placed in ``±extent`` each episode.

    It extends the navigation base the paper's walled suites extend too
    (:class:`crax.suites.navigation.NavigationBase`: placeables built, bound, moved and respawned
    by label), not their walled arena.

    What every task shares, as ``bases/base_task.py`` and ``builder.py`` define it:

    - Layout: the agent (keepout 0.4) and then each object class in Safety-Gymnasium's order
      (:attr:`objects`), each drawn uniformly in the square ``±(extent − its keepout)`` and kept
      ``keepout_i + keepout_j`` from every object placed before it; crax draws
      ``num_candidates`` at once per object instead of rejection sampling (where none fits,
      the one with the most clearance); the agent's yaw and each vase's are uniform.
    - Observation: the body's own readings (its ``obs_keys``: Point 12, Ant 40), then one pseudo-lidar (16 bins, range 3,
      aliased) per lidar-observed object class in :attr:`objects` order, as Safety-Gymnasium's
      flattened observation orders its keys.
    - Cost: each term's raw value is ``metrics["cost/<term>"]`` (hazards: ``hazard_cost ·
      (0.2 − d)`` inside each hazard; vases: contacts and speed); the step's cost is
      Safety-Gymnasium's indicator, 1.0 when the terms sum to more than 0 (:meth:`step_cost`).
    - Physics: after the substeps one ``mjx.forward``, as Safety-Gymnasium's ``mj_forward``,
      so positions, contacts and sensors are those of the final state.

    Subclasses call :meth:`_setup_objects` and write :meth:`init_task` and :meth:`transition`.
    """

    requires = frozenset({SAFETY_GYM})
    levels = (0, 1, 2)
    forward_after_step = True
    task: ClassVar[str]
    """Safety-Gymnasium's name for the task, as its ids spell it (``Goal``)."""
    cost_indicator: ClassVar[bool] = True
    floor_size: ClassVar[float | None] = None
    """Half-size of the floor where Safety-Gymnasium's task sets its own (``floor_conf.size``); None: crax's."""

    def _setup_objects(self, body: Body, level: int, objects: dict[str, Placeable], values: Any, *,
                       extent: float, lidar: tuple[str, ...]) -> None:
        """Stores the objects (label -> placeable, in Safety-Gymnasium's order), builds their costs
        (``hazards``: zones; ``vases``: contact and velocity terms where :attr:`vases_constrained`)
        and the lidars of the labels in ``lidar``. Classes with no objects are left out (no lidar,
        no cost term), as Safety-Gymnasium adds no object class a level does not have."""
        objects = {label: p for label, p in objects.items() if p.count}
        self.body = body
        self.level = level
        self.objects = nnx.Dict(objects)
        self.order = tuple(objects)  # Safety-Gymnasium's order: nnx.clone (every env's copy) sorts an nnx.Dict's keys
        self.extent = extent
        self.num_candidates = values.num_candidates
        for label, p in objects.items():
            p.label = label
        constraints: list[Constraint] = []
        zones, vases = objects.get("hazards"), objects.get("vases")
        if isinstance(zones, CylinderZones):  # cost · (r − d) inside each: the zones' 1 − d/r scaled by cost · r
            constraints.append(HazardProximity(zones, cost_scale=values.hazard_cost * zones.radius, term="hazards"))
        if isinstance(vases, Vases) and self.vases_constrained(level):
            constraints.append(VaseContact(vases, contact_cost=values.vase_contact_cost))
            constraints.append(VaseVelocity(vases, velocity_cost=values.vase_velocity_cost))
        self.constraints = nnx.List(constraints)
        self.sensors = nnx.List([self.lidar_of(label, values) for label in lidar if label in objects])

    def build(self, spec: mujoco.MjSpec) -> None:
        super().build(spec)
        if self.floor_size is not None:
            spec.geom("floor").size = [self.floor_size, self.floor_size, 0.1]

    @classmethod
    def served_id(cls, agent: str, level: int) -> str:
        """Safety-Gymnasium's id of the task on ``agent`` at ``level``, e.g. ``SafetyPointGoal1-v0``."""
        return f"Safety{agent}{cls.task}{level}-{VERSION}"

    def env_id(self) -> str:
        """Safety-Gymnasium's id of the task, e.g. ``SafetyPointGoal1-v0``."""
        return self.served_id(getattr(self.body, "agent", self.body.name), self.level)

    def gymnasium_spaces(self) -> dict[str, Any]:
        """Safety-Gymnasium's spaces for :mod:`crax.gymnasium`: observation bounds (sensors
        unbounded, lidars in [0, 1]), float64 observations, and float64 actions in the actuators'
        ``ctrlrange`` as float32 bounds (``BaseAgent._build_action_space``: [-1, 1] but for the
        Racecar's ±20 and ±0.785; the Gymnasium face rescales them onto crax's [-1, 1])."""
        low = np.concatenate([np.full(self.body_obs_size, -np.inf)] + [np.zeros(s.size) for s in self.sensors])
        high = np.concatenate([np.full(self.body_obs_size, np.inf)] + [np.ones(s.size) for s in self.sensors])
        act_low, act_high = np.asarray(self.body.ctrl_range, np.float32).astype(np.float64).T
        return {"obs_low": low, "obs_high": high, "dtype": np.float64,
                "action_low": act_low, "action_high": act_high, "action_dtype": np.float64}

    @property
    def body_obs_size(self) -> int:
        """Size of the body's own observation: its ``obs_keys`` (the Point's four 3-axis sensors: 12)."""
        return sum(size for _, size in self.body.obs_keys)

    @staticmethod
    def lidar_of(label: str, values: Any, **kwargs: Any) -> Lidar:
        """Safety-Gymnasium's pseudo-lidar of ``task[label]``: ``values.lidar_bins`` bins, range
        ``values.lidar_max_dist``, aliased, in the agent's full frame (a tilted Ant's roll, pitch
        and height shift it, as in Safety-Gymnasium's ``_ego_xy``)."""
        return Lidar(label, num_bins=values.lidar_bins, max_dist=values.lidar_max_dist, tilted=True, **kwargs)

    @staticmethod
    def vases_constrained(level: int) -> bool:
        """Whether the vases cost at ``level`` (Safety-Gymnasium: from level 2)."""
        return level >= 2

    @staticmethod
    def hazard_zones(count: int, size: float = HAZARD_SIZE, keepout: float = 0.18) -> SafetyGymHazards:
        """Safety-Gymnasium's hazards: zones of radius ``size`` (0.2), keepout 0.18 (Goal's), drawn as its
        thin raised cylinders (:class:`~crax.objects.safety_zones.SafetyGymHazards`)."""
        return SafetyGymHazards(count, size, keepout=keepout)

    @staticmethod
    def vases(count: int) -> Vases:
        """Safety-Gymnasium's vases."""
        return Vases(count)

    @property
    def placeables(self) -> dict[str, Placeable]:
        return dict(self.objects.items())

    def hazard_positions(self, positions: dict[str, jax.Array]) -> jax.Array:
        return positions.get("hazards", jnp.zeros((0, 2), jnp.float32))

    def step_cost(self, costs: dict[str, jax.Array]) -> jax.Array:
        """Safety-Gymnasium's step cost: 1.0 when the raw terms sum to more than 0, else 0.0."""
        total = super().step_cost(costs)
        return (total > 0).astype(jnp.float32) if self.cost_indicator else total

    def sample_start(self, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        """Places the agent and every object (see the class docstring); returns data and the
        positions by label, with ``"hazards"`` (the hazards' positions, empty without)."""
        k_layout, k_yaw, k_rot = jax.random.split(key, 3)
        objects = [(label, self.objects[label]) for label in self.order]
        keepout = jnp.asarray([self.agent_keepout] + [p.keepout for _, p in objects for _ in range(p.count)], jnp.float32)
        xy = self.draw_layout(k_layout, keepout)
        positions, start = {}, 1
        for label, p in objects:
            positions[label] = xy[start: start + p.count]
            start += p.count
        qpos, qvel = self.body.initial_state(jax.random.fold_in(k_yaw, 1))
        yaw = jax.random.uniform(k_yaw, (), minval=0.0, maxval=2 * jnp.pi)
        data = self.body.write_state(data, self.body.place(qpos, xy[0], yaw), qvel)
        data = self.place_objects(data, positions, k_rot)
        return data, {**positions, "hazards": self.hazard_positions(positions)}

    def draw_layout(self, key: jax.Array, keepout: jax.Array) -> jax.Array:
        """Positions (n, 2) for the agent and the objects, in Safety-Gymnasium's order, of keepouts
        ``keepout`` (n,), each in the square ``±(extent − its keepout)``: one :func:`sample_layout`
        draw (Button's crowded layouts are drawn again until one fits)."""
        return sample_layout(key, keepout, self.extent - keepout, num_candidates=self.num_candidates)

    def place_objects(self, data: mjx.Data, positions: dict[str, jax.Array], key: jax.Array | None) -> mjx.Data:
        """Moves each object to ``positions[label]``; those physics moves (:data:`MOVED`) get a uniform
        yaw each (0 without ``key``)."""
        for label, p in self.objects.items():
            if isinstance(p, MOVED):
                yaw = None if key is None else jax.random.uniform(key, (p.count,), minval=0.0, maxval=2 * jnp.pi)
                data = p.write(data, positions[label], yaw=yaw)
            else:
                data = p.write(data, positions[label])
        return data

    def track_objects(self, data: mjx.Data, task: dict[str, Any]) -> dict[str, Any]:
        """``task`` with the positions of the objects physics moves (:data:`MOVED`) read from ``data``."""
        moved = {label: p.position(data) for label, p in self.objects.items() if isinstance(p, MOVED)}
        return {**task, **moved}
