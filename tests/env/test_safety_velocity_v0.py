"""Safety-Gymnasium's Velocity-v0 ids against what Safety-Gymnasium 1.0.0 recorded.

v0 is v1's task with other thresholds (and the Swimmer's cost on its planar speed), so v1's
recorded physics (``test_safety_velocity.py``) covers its dynamics; this file checks what v0 defines,
on one recorded step per state: the state before and after the step (Safety-Gymnasium's) go through
MuJoCo's forward pass in C, and the suite's transition and costs, run eagerly (nothing compiled),
give the reward, the velocity and the cost. ``tools/safety_gymnasium/sg_velocity_v0_reference.py`` records
``tests/data/safety_velocity_v0_reference.json``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.gymnasium.env import action_box, action_scale, observation_space
from crax.suites.safety_gym import SafetyVelocity, SafetyVelocityV0
from tests.env import c_forward
from tests.env.safety_gym_reference import load

AGENTS = ("Ant", "HalfCheetah", "Hopper", "Humanoid", "Swimmer", "Walker2d")
ATOL = 1e-3
"""Reward and velocity over one step from float32 states (measured ≤ 2e-4)."""


def record(agent: str) -> dict:
    return load("safety_velocity_v0_reference.json")["tasks"][f"Safety{agent}Velocity-v0"]


@pytest.fixture(scope="module", params=AGENTS)
def env(request):
    return crax.make(f"Safety{request.param}Velocity-v0")


def _state(env, qpos, qvel):
    data = env.body.write_state(env._data0, jnp.asarray(qpos, jnp.float32), jnp.asarray(qvel, jnp.float32))
    return c_forward.forward(env, data)


def test_spaces_timing_and_threshold_are_safety_gymnasiums(env):
    ref = record(env.body.agent)
    assert isinstance(env.suite, SafetyVelocityV0) and env.id == f"Safety{env.body.agent}Velocity-v0"
    assert float(env.suite.constraints[0].threshold[...]) == pytest.approx(ref["velocity_threshold"], rel=1e-7)
    assert env.episode_length == ref["max_episode_steps"] and env.body.dt == pytest.approx(ref["dt"])
    obs, act = observation_space(env), action_box(env)
    assert list(obs.shape) == ref["observation_space"]["shape"] and str(obs.dtype) == ref["observation_space"]["dtype"]
    np.testing.assert_allclose(act.low, ref["action_space"]["low"], rtol=1e-8)  # the JSON keeps 9 digits
    np.testing.assert_allclose(act.high, ref["action_space"]["high"], rtol=1e-8)


@pytest.mark.slow  # 2-5 s per agent, eager (Velocity's recorded physics runs in the full suite too)
def test_one_step_reward_velocity_and_cost_are_safety_gymnasiums(env):
    ref, suite = record(env.body.agent), env.suite
    tau = ref["velocity_threshold"]
    scale = action_scale(env)
    for case in ref["steps"]:
        a = np.asarray(case["action"], np.float32)
        action = jnp.asarray(a if scale is None else (a - scale[0]) / scale[1])
        before, after = _state(env, case["qpos"], case["qvel"]), _state(env, case["qpos_after"], case["qvel_after"])
        task = {"velocity": jnp.zeros((), jnp.float32)}
        _, tr = suite.transition(env.mjx_model, before, after, task, action)
        costs = suite.costs(env._context(after, tr.task, action))
        vx, vy = case["x_velocity"], case["y_velocity"]
        speed = float(np.hypot(vx, vy)) if suite.planar_speed(env.body) else vx
        where = f"{env.id} {case['name']}"
        assert float(tr.task["velocity"]) == pytest.approx(speed, abs=ATOL), where
        assert float(tr.reward) == pytest.approx(case["reward"], abs=ATOL), where
        assert bool(tr.terminated) == case["terminated"], where
        assert abs(speed - tau) > ATOL, where  # the indicator is then exact:
        assert float(suite.step_cost(costs)) == case["cost"], where


def test_v0_differs_from_v1_where_safety_gymnasium_says():
    swimmer, hopper = crax.make("SafetySwimmerVelocity-v0"), crax.make("SafetyHopperVelocity-v0")
    assert swimmer.suite.planar_speed(swimmer.body) and not SafetyVelocity.planar_speed(
        crax.make("SafetySwimmerVelocity-v1").suite, swimmer.body)
    assert not hopper.suite.planar_speed(hopper.body)
    fast_y = next(c for c in record("Swimmer")["steps"] if c["name"] == "fast_y")
    assert fast_y["cost"] == 1.0 and abs(fast_y["x_velocity"]) < record("Swimmer")["velocity_threshold"]
