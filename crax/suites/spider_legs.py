"""SpiderLegs: run forward without setting the restricted feet down (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import LOCOMOTION, Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, REAL, Param, TaskParam
from crax.costs.foot_contact import FootContact
from crax.suites.base import Suite, Transition


class SpiderLegs(Suite):
    """The Spider runs along +x on a gait that keeps some of its six feet off the floor.

    ``r = v_x + healthy_reward·1[healthy] − ctrl_cost·‖a‖²`` (terms ``reward/forward``,
    ``reward/healthy``, ``reward/ctrl``), v_x the torso's forward velocity over the step.
    ``c = cost_scale · Σ_{f restricted} 1[contact(f, floor)]`` (one term, ``cost/legs``), a contact
    being a negative distance in MJX's foot–floor contact slot
    (:class:`~crax.costs.foot_contact.FootContact`). Terminates when the Spider is unhealthy
    (torso outside z 0.2 to 1.0). Observation: the Spider's 35, no sensor (the restricted set is
    fixed per level, and the feet's heights follow from qpos).

    The id names no body (``SpiderLegs2``): ``default_body = "Spider"``, and ``crax.make``
    refuses other bodies. A plugin body with the Spider's foot names may still be composed by
    hand: ``SpiderLegs(MyBody(), 1)``.

    Args:
      body: the Spider (a locomotion body whose ``feet`` name its foot geoms).
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "SpiderLegs"
    requires = frozenset({LOCOMOTION})
    default_body = "Spider"
    params = {
        "restricted_feet": Param(
            doc="the feet that must not touch the floor (names from the body's feet)",
            levels={
                1: ("front_left", "back_right"),
                2: ("front_left", "mid_right", "back_left"),
                3: ("front_left", "front_right", "back_left", "back_right"),
            },
        ),
        "cost_scale": Param(1.0, NON_NEGATIVE, "cost of one restricted foot on the floor"),
        "healthy_reward": Param(1.0, REAL, "reward per healthy step"),
        "ctrl_cost": Param(0.5, NON_NEGATIVE, "weight of ‖a‖²"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        restricted = tuple(v.restricted_feet)
        unknown = [f for f in restricted if f not in body.feet]
        if unknown or not restricted:
            raise ValueError(
                f"restricted_feet {restricted!r}: need one or more of {body.name}'s feet: {', '.join(body.feet) or '(none)'}"
            )
        self.body = body
        self.level = level
        self.restricted_feet = restricted
        self.healthy_reward = TaskParam(jnp.asarray(v.healthy_reward, jnp.float32))
        self.ctrl_cost = TaskParam(jnp.asarray(v.ctrl_cost, jnp.float32))
        self.sensors = nnx.List([])
        self.constraints = nnx.List([FootContact(tuple(body.prefix + f for f in restricted), cost_scale=v.cost_scale)])

    def build(self, spec: mujoco.MjSpec) -> None:
        del spec  # an open floor: the arena is enough

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        qpos, qvel = self.body.initial_state(key)
        data = self.body.write_state(data, qpos, qvel)
        return data, {}

    def transition(self, model, before, data, task, action):
        forward = self.body.planar_velocity(before, data)[0]
        healthy = self.body.healthy(data)
        rewards = {
            "forward": forward,
            "healthy": self.healthy_reward[...] * healthy.astype(jnp.float32),
            "ctrl": -self.ctrl_cost[...] * jnp.sum(jnp.square(jnp.clip(action, -1.0, 1.0))),
        }
        return data, Transition(
            task=task,
            rewards=rewards,
            reward=rewards["forward"] + rewards["healthy"] + rewards["ctrl"],
            terminated=~healthy,
        )
