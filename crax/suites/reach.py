"""Reach: move an arm's fingertip to a target without sweeping over flat zones (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies.base import ARM, Body
from crax.core.mjx import mjx
from crax.core.params import COUNT, NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, REAL, Param, TaskParam
from crax.costs.arm_touch import ArmTouch
from crax.objects.mixed_zones import MixedZones
from crax.objects.placement import sample_layout
from crax.sensors.lidar import Lidar
from crax.suites.base import Suite, Transition


def sample_annulus(key: jax.Array, shape: tuple[int, ...], r_min: float, r_max: float) -> jax.Array:
    """Points (*shape, 2) uniform (by area) in the annulus r_min ≤ ‖p‖ ≤ r_max around the origin."""
    k_r, k_phi = jax.random.split(key)
    r = jnp.sqrt(jax.random.uniform(k_r, shape, minval=r_min**2, maxval=r_max**2))
    phi = jax.random.uniform(k_phi, shape, minval=-jnp.pi, maxval=jnp.pi)
    return jnp.stack([r * jnp.cos(phi), r * jnp.sin(phi)], axis=-1)


class Reach(Suite):
    """Reach a target with the fingertip; flat zones in the workspace cost when the arm is over them.

    ``r = shaping_scale · max(0, 1 − d/shaping_range)² + reach_bonus · 1[d < reach_radius]``
    (terms ``reward/shaping`` and ``reward/reached``), d the fingertip–target distance (also in
    ``metrics["distance"]``). ``c = cost_scale · Σ_i 1[arm ∩ zone_i]`` (``cost/zones``): the arm
    sampled at ``samples_per_link`` points per link plus the tip, each zone counted once.
    Observation: the body's 11 + a 16-bin pseudo-lidar of the zone centres around the arm's base
    (range 0.3, bins fixed in the world frame since the base never turns) = 27.

    Decisions (SPEC is silent):

    - The target is drawn uniformly by area in the annulus ``target_radii`` = (0.05, 0.20) m
      around the base. The arm reaches 0.018–0.21 m (links 0.1 and 0.11, elbow within ±3 rad);
      0.20 is Gymnasium's target radius, 0.05 keeps the target off the base.
    - Zones alternate circles (r 0.035) and squares (half 0.03); their centres are drawn in the
      annulus ``hazard_radii`` = (0.07, 0.21) m, so no zone covers the base (which the arm can
      never leave) and every zone can be reached. Zones keep their circumradius clear of each
      other and ``target_keepout`` = 0.03 m clear of the target (reach radius 0.02 + the tip's
      1 cm). Placement is :func:`~crax.objects.placement.sample_layout` with 256 fixed
      candidates per zone: of 40960 level-3 layouts none overlapped (with 64 candidates, 56 did).
    - The arm's start pose is Gymnasium's (straight along +x, ±0.1 rad) and zones may lie under
      it: keeping it clear would leave the +x strip free of zones in every layout.
    - The target does not respawn when reached (as in Gymnasium); the episode runs to the time
      limit (1000 steps by default, docs/SPEC.md section 1; Gymnasium's Reacher uses
      ``episode_length=50``). Target and zones are drawn anew at every reset.
    - Never terminates.

    Arm bodies provide ``set_target(data, xy)``, ``target(data)``, ``fingertip(data)`` and the class
    attribute ``links`` (the bodies at the base joint, each further joint and the fingertip, base
    first); the base stands at the world origin and never turns (the lidar's frame).

    Args:
      body: an arm body.
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Reach"
    requires = frozenset({ARM})
    body: Any  # an arm body: a Body with links, set_target, target and fingertip (plugins.validate checks)
    params = {
        "num_hazards": Param(valid=COUNT, doc="number of zones", levels={1: 4, 2: 7, 3: 10}),
        "hazard_radius": Param(0.035, POSITIVE, "radius of the circle zones (m)"),
        "hazard_half": Param(0.03, POSITIVE, "half side of the square zones (m)"),
        "cost_scale": Param(1.0, NON_NEGATIVE, "β, the cost per zone touched"),
        "samples_per_link": Param(5, POSITIVE_COUNT, "arm sample points per link (plus the tip)"),
        "shaping_scale": Param(0.1, REAL, "weight of the distance shaping"),
        "shaping_range": Param(0.4, POSITIVE, "range of the distance shaping (m)"),
        "reach_bonus": Param(1.0, REAL, "reward per step with the fingertip within reach_radius"),
        "reach_radius": Param(0.02, NON_NEGATIVE, "the target is reached within this distance (m)"),
        "lidar_bins": Param(16, POSITIVE_COUNT, "bins of the zone lidar"),
        "lidar_max_dist": Param(0.3, POSITIVE, "range of the zone lidar (m)"),
        "target_radii": Param((0.05, 0.20), None, "annulus (r_min, r_max) the target is drawn in (m)"),
        "hazard_radii": Param((0.07, 0.21), None, "annulus (r_min, r_max) the zone centres are drawn in (m)"),
        "target_keepout": Param(0.03, NON_NEGATIVE, "clearance of zones around the target (m)"),
        "num_candidates": Param(256, POSITIVE_COUNT, "layout candidates per zone"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        if not isinstance(v.num_hazards, int) or v.num_hazards < 0:
            raise ValueError(f"num_hazards must be an integer >= 0, got {v.num_hazards!r}")
        for label, (lo, hi) in (("target_radii", v.target_radii), ("hazard_radii", v.hazard_radii)):
            if not 0 <= lo < hi:
                raise ValueError(f"{label} must be (r_min, r_max) with 0 <= r_min < r_max, got {(lo, hi)!r}")
        self.body = body
        self.level = level
        self.zones = MixedZones(v.num_hazards, v.hazard_radius, v.hazard_half)
        self.zones.label = "hazards"
        self.target_radii = tuple(v.target_radii)
        self.hazard_radii = tuple(v.hazard_radii)
        self.target_keepout = v.target_keepout
        self.num_candidates = v.num_candidates
        self.shaping_scale = TaskParam(jnp.asarray(v.shaping_scale, jnp.float32))
        self.shaping_range = TaskParam(jnp.asarray(v.shaping_range, jnp.float32))
        self.reach_bonus = TaskParam(jnp.asarray(v.reach_bonus, jnp.float32))
        self.reach_radius = TaskParam(jnp.asarray(v.reach_radius, jnp.float32))
        self.sensors = nnx.List([Lidar("hazards", num_bins=v.lidar_bins, max_dist=v.lidar_max_dist)])
        chain = tuple(body.prefix + b for b in self.body.links)
        self.constraints = nnx.List(
            [ArmTouch(self.zones, chain, samples_per_link=v.samples_per_link, cost_scale=v.cost_scale)]
        )

    @property
    def placeables(self) -> dict[str, MixedZones]:
        return {"hazards": self.zones}

    def place(self, data: mjx.Data, target: jax.Array, hazards: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        """Moves the target (2,) and the zones (n, 2); returns the data and the task state."""
        data = self.body.set_target(data, target)
        if self.zones.count:
            ids = jnp.asarray(self.zones.mocap_ids)
            data = data.replace(mocap_pos=data.mocap_pos.at[ids].set(self.zones.mocap_pos(hazards)))
        return data, {"target": target[None, :], "hazards": hazards}

    def draw_layout(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """A target (2,) and zone centres (n, 2) that keep clear of each other."""
        k_target, k_zones = jax.random.split(key)
        target = sample_annulus(k_target, (), *self.target_radii)
        fixed = jnp.concatenate([target, jnp.asarray([self.target_keepout], jnp.float32)])[None, :]
        hazards = sample_layout(
            k_zones, jnp.asarray(self.zones.keepouts, jnp.float32).reshape(-1), 0.0,
            num_candidates=self.num_candidates, fixed=fixed,
            candidates=lambda k, n: sample_annulus(k, (n,), *self.hazard_radii),
        )
        return target, hazards

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        k_body, k_layout = jax.random.split(key)
        qpos, qvel = self.body.initial_state(k_body)
        data = self.body.write_state(data, qpos, qvel)
        return self.place(data, *self.draw_layout(k_layout))

    def transition(self, model, before, data, task, action):
        d = jnp.linalg.norm(self.body.fingertip(data) - self.body.target(data))
        closeness = jnp.maximum(0.0, 1.0 - d / self.shaping_range[...])
        rewards = {
            "shaping": self.shaping_scale[...] * jnp.square(closeness),
            "reached": self.reach_bonus[...] * (d < self.reach_radius[...]).astype(jnp.float32),
        }
        return data, Transition(
            task=task, rewards=rewards, reward=rewards["shaping"] + rewards["reached"],
            terminated=jnp.array(False), extra_metrics={"distance": d},
        )
