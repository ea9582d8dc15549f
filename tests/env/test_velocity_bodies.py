"""Velocity on every locomotion body: speed, reward terms and both cost modes on hand-set motions.

For each body, a standing pose and the same pose with the root moved by ``v · dt`` are run
through the kinematics (``mjx.kinematics`` and ``mjx.com_pos``: body positions and centres of mass,
one small compile per body); the suite's ``transition`` between them must see
exactly the speed ``|v|`` (planar speed; forward x velocity for planar bodies), and the velocity
cost must be ``w · 1[v > τ]`` (binary) and ``w · max(0, v − τ)`` (hinge).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.bodies.base import LOCOMOTION, PLANAR
from crax.core.mjx import mjx
from crax.costs.velocity import VelocityThreshold
from crax.suites.velocity import LEVEL_FACTORS

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

TAU = 1.0  # used where a body's base τ has not been measured


def velocity_bodies() -> list[str]:
    reg = crax.registry()
    return sorted(b for b, cls in reg.bodies.items() if LOCOMOTION in cls.kinds)


def make(body: str, level: int = 1, **kw):
    cls = crax.registry().bodies[body]
    if cls.velocity_threshold is None:
        kw.setdefault("velocity_threshold", TAU)
    return crax.make(f"{body}Velocity{level}", **kw)


@functools.cache
def forward_fn(body: str):
    env = make(body)
    return env, jax.jit(lambda d: mjx.com_pos(env.mjx_model, mjx.kinematics(env.mjx_model, d)))


def root_shift(env, qpos: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """qpos with the body's root moved by (dx, dy) on the plane (planar bodies: x only)."""
    q = qpos.copy()
    start = env.body.qpos_adr[0]
    q[start] += dx
    if PLANAR not in env.body.kinds:
        q[start + 1] += dy
    return q


def hand_set(body: str, vx: float, vy: float):
    env, forward = forward_fn(body)
    qpos0 = np.asarray(env.mj_model.qpos0, np.float32)
    d0 = env._data0
    before = forward(d0.replace(qpos=jnp.asarray(qpos0)))
    after = forward(d0.replace(qpos=jnp.asarray(root_shift(env, qpos0, vx * env.dt, vy * env.dt))))
    return env, before, after


@pytest.mark.parametrize("body", velocity_bodies())
@pytest.mark.slow
def test_velocity_suite_speed_reward_and_costs(body):
    env, before, after = hand_set(body, 1.5, -0.8)
    suite = env.suite
    planar = PLANAR in env.body.kinds
    want_speed = 1.5 if planar else float(np.hypot(1.5, 0.8))
    action = jnp.full(env.action_size, 0.5)
    task = {"velocity": jnp.zeros(())}
    _, tr = suite.transition(env.mjx_model, before, after, task, action)
    assert float(tr.task["velocity"]) == pytest.approx(want_speed, rel=1e-3)
    assert float(tr.rewards["forward"]) == pytest.approx(1.5, rel=1e-3)
    healthy = bool(env.body.healthy(after))
    assert float(tr.rewards["healthy"]) == pytest.approx(env.body.healthy_reward * healthy)
    assert float(tr.rewards["ctrl"]) == pytest.approx(-env.body.ctrl_cost * 0.25 * env.action_size, rel=1e-6)
    base = sum(float(v) for v in tr.rewards.values())
    assert float(tr.reward) == pytest.approx(0.01 * base, rel=1e-5, abs=1e-7)

    ctx = suite.context(env.mjx_model, after, tr.task)
    tau = float(suite.constraints[0].threshold[...])
    for threshold in (want_speed - 0.3, want_speed + 0.3):
        binary = VelocityThreshold(threshold, mode="binary", weight=2.0)
        hinge = VelocityThreshold(threshold, mode="hinge", weight=2.0)
        assert float(binary.cost(ctx)) == pytest.approx(2.0 * (want_speed > threshold))
        assert float(hinge.cost(ctx)) == pytest.approx(2.0 * max(0.0, want_speed - threshold), rel=1e-3, abs=1e-5)
    costs = suite.costs(ctx)
    assert set(costs) == {"velocity"}
    assert float(costs["velocity"]) == pytest.approx(float(want_speed > tau))


@pytest.mark.parametrize("body", velocity_bodies())
def test_backward_motion_costs_planar_bodies_nothing(body):
    """Planar bodies are limited in the forward direction only; the others in any direction."""
    env, before, after = hand_set(body, -3.0, 0.0)
    _, tr = env.suite.transition(env.mjx_model, before, after, {"velocity": jnp.zeros(())}, jnp.zeros(env.action_size))
    speed = float(tr.task["velocity"])
    assert speed == pytest.approx(-3.0 if PLANAR in env.body.kinds else 3.0, rel=1e-3)
    ctx = env.suite.context(env.mjx_model, after, tr.task)
    hinge = VelocityThreshold(1.0, mode="hinge")
    assert float(hinge.cost(ctx)) == pytest.approx(0.0 if PLANAR in env.body.kinds else 2.0, rel=1e-3)


@pytest.mark.parametrize("body", velocity_bodies())
def test_level_thresholds_scale_the_base_tau(body):
    cls = crax.registry().bodies[body]
    if cls.velocity_threshold is None:
        with pytest.raises(ValueError, match="velocity_threshold"):
            crax.make(f"{body}Velocity1")
        return
    for level, factor in LEVEL_FACTORS.items():
        env = crax.make(f"{body}Velocity{level}")
        assert float(env.suite.constraints[0].threshold[...]) == pytest.approx(cls.velocity_threshold * factor)
