"""Safety-Gymnasium 1.0.0's Velocity-v1 and Velocity-v0 (``tasks/safe_velocity/safety_<agent>_velocity_v{0,1}.py``)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.bodies.base import SAFETY_GYM
from crax.bodies.safety_locomotion import SafetyGymLocomotion
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, Param
from crax.costs.velocity import VelocityThreshold
from crax.suites.base import Suite, Transition


class SafetyVelocity(Suite):
    """Run forward under a speed limit, as Safety-Gymnasium's Velocity-v1 defines it (Gymnasium's MuJoCo v4 tasks).

    Each step: ``v = (p_after − p_before) / dt`` with ``p`` the body's
    :meth:`~crax.bodies.safety_locomotion.SafetyGymLocomotion.planar_point` (root slide
    coordinates; Ant: the torso; Humanoid: the centre of mass). Reward
    ``forward_reward_weight · v_x + healthy_reward − ctrl_cost · ‖ctrl‖²`` with the body's weights
    (the healthy reward is paid on every step, the last one included, as Gymnasium's with
    ``terminate_when_unhealthy``), ``ctrl`` the action in actuator units, unclipped.
    Terminates when the body is not healthy (HalfCheetah and Swimmer never); 1000 steps.
    Cost: ``metrics["cost/velocity"]`` is the raw excess ``max(0, v − τ)``, and the step cost is
    Safety-Gymnasium's ``float(v > τ)``; ``v`` is the planar speed for Ant and Humanoid and the
    x velocity for the others (Swimmer's v1 included), kept in ``metrics["velocity"]``.
    No level: the single level is 0 and the id ``Safety{Agent}Velocity-v1`` names none.

    Args:
      body: a Safety-Gymnasium velocity body (:class:`~crax.bodies.safety_locomotion.SafetyGymLocomotion`).
      level: 0.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyVelocity"
    task = "Velocity"
    version: ClassVar[str] = "v1"
    """The version of Safety-Gymnasium's velocity tasks, as its ids spell it (v1: its later thresholds)."""
    planar_speed_agents: ClassVar[frozenset[str]] = frozenset()
    """Agents whose cost reads the planar speed in this version although their body's ``speed_xy`` is off."""
    requires = frozenset({SAFETY_GYM})
    levels = (0,)
    cost_indicator: ClassVar[bool] = True
    params = {
        "velocity_threshold": Param(None, NON_NEGATIVE,
                                    "τ (m/s); None: Safety-Gymnasium's v1 value for the agent (Ant 2.6222, "
                                    "HalfCheetah 3.2096, Hopper 0.7402, Humanoid 1.4149, Swimmer 0.2282, "
                                    "Walker2d 2.3415)"),
    }

    body: SafetyGymLocomotion

    def __init__(self, body: SafetyGymLocomotion, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        threshold = self.default_threshold(body) if v.velocity_threshold is None else v.velocity_threshold
        if threshold is None:
            raise ValueError(f"body {body.name} declares no velocity_threshold; pass velocity_threshold=")
        self.body = body
        self.level = level
        self.sensors = nnx.List([])
        self.constraints = nnx.List([VelocityThreshold(threshold, mode="hinge")])

    @staticmethod
    def default_threshold(body: SafetyGymLocomotion) -> float | None:
        """τ where none is given: the body's (Safety-Gymnasium's v1 value)."""
        return body.velocity_threshold

    def planar_speed(self, body: SafetyGymLocomotion) -> bool:
        """Whether the cost reads the planar speed (else the x velocity): the body's ``speed_xy``, or
        its agent among :attr:`planar_speed_agents`."""
        return body.speed_xy or body.agent in self.planar_speed_agents

    def speed(self, body: SafetyGymLocomotion, v: jax.Array) -> jax.Array:
        """What the cost compares with τ, from the planar velocity ``v``: its norm (:meth:`planar_speed`)
        or its x component."""
        return jnp.linalg.norm(v) if self.planar_speed(body) else v[0]

    @classmethod
    def served_id(cls, agent: str, level: int) -> str:
        """Safety-Gymnasium's id for ``agent`` (the level is not part of it)."""
        del level
        return f"Safety{agent}{cls.task}-{cls.version}"

    def env_id(self) -> str:
        """Safety-Gymnasium's id of the task, e.g. ``SafetyHopperVelocity-v1``."""
        return self.served_id(self.body.agent, self.level)

    def gymnasium_spaces(self) -> dict[str, Any]:
        """Safety-Gymnasium's spaces: float64 observations, unbounded; float32 actions in the
        actuators' ``ctrlrange`` (the Gymnasium face rescales them onto crax's [-1, 1])."""
        n = self.observation_size
        lo, hi = np.asarray(self.body.ctrl_range, np.float32).T
        return {"obs_low": np.full(n, -np.inf), "obs_high": np.full(n, np.inf), "dtype": np.float64,
                "action_low": lo, "action_high": hi, "action_dtype": np.float32}

    def build(self, spec: mujoco.MjSpec) -> None:
        self.body.configure(spec)

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.observation_size = int(jax.eval_shape(self.body.observe, mjx.make_data(m)).shape[0])

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        qpos, qvel = self.body.initial_state(key)
        return self.body.write_state(data, qpos, qvel), {"velocity": jnp.zeros((), jnp.float32)}

    def transition(self, model, before, data, task, action):
        body = self.body
        v = (body.planar_point(data) - body.planar_point(before)) / body.dt
        speed = self.speed(body, v)
        rewards = {
            "forward": body.forward_reward_weight * v[0],
            "healthy": jnp.asarray(body.healthy_reward, jnp.float32),
            # unclipped, as Safety-Gymnasium squares the action it is given (MuJoCo clamps the control)
            "ctrl": -body.ctrl_cost * jnp.sum(jnp.square(body.ctrl_units(action))),
        }
        reward = rewards["forward"] + rewards["healthy"] + rewards["ctrl"]
        return data, Transition(task={**task, "velocity": speed}, rewards=rewards, reward=reward,
                                terminated=~body.healthy(data), extra_metrics={"velocity": speed})

    def step_cost(self, costs: dict[str, jax.Array]) -> jax.Array:
        """Safety-Gymnasium's cost: 1.0 when the speed is over the threshold (the raw excess > 0)."""
        return (super().step_cost(costs) > 0).astype(jnp.float32)


V0_THRESHOLDS = {"Ant": 2.5745, "HalfCheetah": 2.8795, "Hopper": 0.37315, "Humanoid": 2.3475, "Swimmer": 0.04845,
                 "Walker2d": 1.7075}
"""Safety-Gymnasium's Velocity-v0 thresholds τ (m/s) by agent (``safety_<agent>_velocity_v0.py``)."""


class SafetyVelocityV0(SafetyVelocity):
    """Safety-Gymnasium's Velocity-v0: Velocity-v1's task (v1 subclasses v0 and changes only τ)
    with v0's thresholds (:data:`V0_THRESHOLDS`), and the Swimmer's cost reading its planar speed
    (v1's reads its x velocity). Served as ``Safety{Agent}Velocity-v0``.

    Args:
      body: a Safety-Gymnasium velocity body (:class:`~crax.bodies.safety_locomotion.SafetyGymLocomotion`).
      level: 0.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyVelocityV0"
    version = "v0"
    planar_speed_agents = frozenset({"Swimmer"})
    params = {
        "velocity_threshold": dataclasses.replace(
            SafetyVelocity.params["velocity_threshold"],
            doc="τ (m/s); None: Safety-Gymnasium's v0 value for the agent ("
                + ", ".join(f"{agent} {tau}" for agent, tau in V0_THRESHOLDS.items()) + ")"),
    }

    @staticmethod
    def default_threshold(body: SafetyGymLocomotion) -> float | None:
        """τ where none is given: Safety-Gymnasium's v0 value for the agent."""
        return V0_THRESHOLDS.get(body.agent)
