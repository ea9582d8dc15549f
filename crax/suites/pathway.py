"""Pathway: run forward without stepping on the zones strung along the way (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from crax.bodies.base import LOCOMOTION, PLANAR, Body
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, REAL, Param, Range
from crax.costs.events import TerminalCost
from crax.costs.foot_zones import FootZones
from crax.objects.pathway import PathwayZones
from crax.sensors.lidar import Lidar
from crax.suites.base import Suite, Transition


class Pathway(Suite):
    """Foot placement among flat zones along +x; accepts every planar locomotion body.

    ``r = v_x + healthy_reward·1[healthy]`` (terms ``reward/forward``, ``reward/healthy``), v_x the
    forward velocity of the body's locomotion point (the torso) over the step, as in Velocity.

    ``c = β Σ_i max_f max(0, 1 − d_f^(i)/r_i)² + c_term·1[fell]`` (terms ``cost/zones``,
    ``cost/fall``): the sum runs over all zones, the max over the body's feet (``Body.feet``, site
    names) whose site is below ``ground_height``; d is the planar distance of the foot to a disc's
    centre and the Chebyshev distance to a square's centre (the falloff of a square then covers
    the drawn square; see :class:`~crax.objects.pathway.PathwayZones`). "fell" is the body's
    unhealthy termination; bodies that never terminate (HalfCheetah) never pay ``c_term``.

    The ``num_hazards`` zones (discs of ``hazard_radius`` and squares of half side
    ``hazard_half``, alternating, the first a disc) are laid out anew at every reset: first at
    x ~ U(1, 2), then gaps ~ U(1, max_gap), offsets y ~ U(±0.25); they live in ``task["zones"]``
    (num_hazards, 2). The ``rendered_zones`` of them around the torso are drawn, as mocap bodies
    without collision that follow the agent; costs and the lidar use all of them.

    Observation: body obs + a 16-bin pseudo-lidar (range 5) over the 10 zones nearest to the torso
    (HalfCheetah 18 + 16 = 34). Planar bodies cannot turn, so the lidar's bin 0 always looks along
    +x (yaw 0), even when the body flips over.

    Args:
      body: a planar locomotion body that names its foot sites in ``feet``.
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "Pathway"
    requires = frozenset({LOCOMOTION, PLANAR})
    params = {
        "num_hazards": Param(100, POSITIVE_COUNT, "number of zones"),
        "hazard_radius": Param(0.25, POSITIVE, "radius of the disc zones (m)"),
        "hazard_half": Param(0.2, POSITIVE, "half side of the square zones (m)"),
        # gaps are drawn from U(1, max_gap)
        "max_gap": Param(valid=Range(1.0), doc="largest gap between consecutive zones (m)",
                         levels={1: 6.0, 2: 4.0, 3: 2.0}),
        "beta": Param(1.5, NON_NEGATIVE, "weight β of the zone cost"),
        "terminal_cost": Param(5.0, NON_NEGATIVE, "c_term, charged on the step the body falls"),
        "ground_height": Param(0.1, REAL, "a foot touches the ground below this site height (m)"),
        "lidar_bins": Param(16, POSITIVE_COUNT, "bins of the zone lidar"),
        "lidar_max_dist": Param(5.0, POSITIVE, "range of the zone lidar (m)"),
        "lidar_nearest": Param(10, POSITIVE_COUNT, "the zone lidar sees this many zones nearest to the torso"),
        "rendered_zones": Param(10, POSITIVE_COUNT, "zones drawn as mocap bodies around the torso (each costs "
                                "physics time; num_hazards draws every zone)"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        feet = tuple(body.feet)
        if not feet:
            raise ValueError(f"body {body.name!r} names no foot sites (class attribute `feet`); Pathway needs them")
        self.body = body
        self.level = level
        self.zones = PathwayZones(v.num_hazards, v.hazard_radius, v.hazard_half, max_gap=v.max_gap,
                                  rendered=v.rendered_zones)
        self.zones.label = "zones"
        self.sensors = nnx.List([
            Lidar("zones", num_bins=v.lidar_bins, max_dist=v.lidar_max_dist, nearest=min(v.lidar_nearest, v.num_hazards))
        ])
        self.constraints = nnx.List([
            FootZones(self.zones, tuple(body.prefix + f for f in feet), beta=v.beta, ground_height=v.ground_height),
            TerminalCost(v.terminal_cost, key="fell", term="fall"),
        ])

    @property
    def placeables(self) -> dict[str, PathwayZones]:
        return {"zones": self.zones}

    def move(self, data: mjx.Data, zones: jax.Array) -> mjx.Data:
        """Puts the drawn zone mocaps at the window of ``zones`` (count, 2) around the torso.

        Reads the torso position of ``data``; at reset, before any kinematics, that is the origin,
        behind every zone, which gives the same first window as the start pose does.
        """
        return self.zones.write(data, self.zones.window(zones, self.body.position(data)[0]))

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        k_body, k_layout = jax.random.split(key)
        qpos, qvel = self.body.initial_state(k_body)
        zones = self.zones.sample(k_layout)
        data = self.body.write_state(data, qpos, qvel)
        return self.move(data, zones), {"zones": zones, "fell": jnp.array(False)}

    def context(self, model: mjx.Model, data: mjx.Data, task: dict[str, Any]) -> Context:
        ctx = super().context(model, data, task)
        return ctx.replace(agent_yaw=jnp.zeros_like(ctx.agent_yaw))

    def transition(self, model, before, data, task, action):
        del action  # no control cost in Pathway
        forward = self.body.planar_velocity(before, data)[0]
        healthy = self.body.healthy(data)
        if self.zones.rendered < self.zones.count:
            data = self.move(data, task["zones"])
        rewards = {"forward": forward, "healthy": self.body.healthy_reward * healthy.astype(jnp.float32)}
        return data, Transition(
            task={**task, "fell": ~healthy}, rewards=rewards, reward=rewards["forward"] + rewards["healthy"],
            terminated=~healthy,
        )
