"""crax.gymnasium.safety as Safety-Gymnasium code calls it: make(id=..., max_episode_steps=...,
autoreset=..., camera_name=...), safety_gymnasium.vector and safety_gymnasium.wrappers, and the
clear errors for what crax does not offer.

One compiled single env (PointVelocity1, 3-step episodes) and one 2-env vector env. ``ID`` is not a
task Safety-Gymnasium defines, so every call names ``paper_variant=True``: the Safety-style id maps
onto crax's own task (tests/env/test_safety_goal.py covers the ids Safety-Gymnasium defines).
"""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from crax.gymnasium import safety as safety_gymnasium

LENGTH = 3
ID = "SafetyPointVelocity1-v0"
PARAMS = dict(velocity_threshold=0.01, cost_weight=2.0, paper_variant=True)
ACTION = np.array([0.8, -0.4], np.float32)


@pytest.fixture(scope="module")
def env():
    return safety_gymnasium.make(id=ID, max_episode_steps=LENGTH, **PARAMS)


@pytest.mark.slow
def test_make_takes_safety_gymnasium_keywords(env):
    crax_env = env.unwrapped.env
    assert (crax_env.id, crax_env.episode_length) == ("PointVelocity1", LENGTH)
    env.reset(seed=0)
    ends = [env.step(ACTION)[3:5] for _ in range(LENGTH)]
    assert ends == [(False, False)] * (LENGTH - 1) + [(False, True)]  # max_episode_steps is the time limit

    shown = safety_gymnasium.make(ID, render_mode="rgb_array", camera_name="top", width=40, disable_env_checker=True,
                                  paper_variant=True)
    assert shown.unwrapped.render_kwargs == {"camera": "top", "width": 40}
    assert isinstance(safety_gymnasium.make("SafetyPointVelocity1-v1", autoreset=True, paper_variant=True),
                      safety_gymnasium.wrappers.SafeAutoResetWrapper)


@pytest.mark.parametrize("kwargs, message", [
    (dict(id="SafetyPointGoal1-v7"), "not a Safety-Gymnasium task crax serves; served: SafetyPointGoal0-v0.*"
                                     "paper_variant=True gives crax's own"),
    (dict(id="SafetyPointGoal1-v7", paper_variant=True), "version v7 is not one Safety-Gymnasium registers; use SafetyPointGoal1-v0 or "
                                     "SafetyPointGoal1-v1"),
    (dict(id=ID, camera_name="vision"), "camera_name='vision' is not a crax camera; valid choices: track, top"),
    (dict(id=ID, camera_id=1), r"camera_id=...\) is not supported by crax: .*camera_name='track' or 'top'"),
    (dict(id=ID, config={"lidar_num_bins": 8}), r"config=...\) is not supported.*crax.parameters\(id\)"),
    (dict(id=ID, apply_api_compatibility=True), "only apply_api_compatibility=None or False"),
    (dict(id=ID, max_episode_steps=5, episode_length=6), "max_episode_steps=5 and episode_length=6 disagree"),
    (dict(id=ID, num_envs=2, autoreset=False), "crax's vector env always autoresets"),
])
def test_make_refuses_what_crax_cannot_honour(kwargs, message):
    with pytest.raises(ValueError, match=message):
        safety_gymnasium.make(**kwargs)


def test_autoreset_wrapper_resets_on_the_finishing_step(env):
    auto = safety_gymnasium.wrappers.SafeAutoResetWrapper(env)
    auto.reset(seed=1)
    for _ in range(LENGTH - 1):
        assert "final_observation" not in auto.step(ACTION)[-1]
    last = env.unwrapped.state
    obs, reward, cost, terminated, truncated, info = auto.step(ACTION)
    finished = env.unwrapped._step_fn(last, ACTION)  # the finishing step the wrapper took
    assert truncated and not terminated
    np.testing.assert_allclose(info["final_observation"], np.asarray(finished.obs), rtol=1e-5, atol=1e-6)
    assert cost == info["final_info"]["cost"] == float(finished.cost)
    np.testing.assert_array_equal(obs, np.asarray(env.unwrapped.state.obs))  # the new episode's first
    assert np.asarray(env.unwrapped.state.info["steps"]) == 0


def test_wrappers_convert_to_gymnasium_and_back(env):
    w = safety_gymnasium.wrappers
    doubled = w.with_gymnasium_wrappers(env, functools.partial(gym.wrappers.TransformReward, func=lambda r: 2 * r))
    doubled.reset(seed=2)
    obs, reward, cost, *_ = doubled.step(ACTION)
    env.reset(seed=2)
    _, plain_reward, plain_cost, *_ = env.step(ACTION)
    assert (reward, cost) == (pytest.approx(2 * plain_reward), plain_cost) and cost == 2.0

    five = w.SafetyGymnasium2Gymnasium(env)
    five.reset(seed=2)
    out = five.step(ACTION)
    assert len(out) == 5 and out[-1]["cost"] == plain_cost

    limited = w.SafeTimeLimit(env, 2)
    limited.reset(seed=2)
    assert [limited.step(ACTION)[4] for _ in range(2)] == [False, True]
    with pytest.raises(AttributeError, match="no SafePassiveEnvChecker: crax envs pass Gymnasium's env checker"):
        w.SafePassiveEnvChecker  # noqa: B018


@pytest.mark.slow
def test_vector_make_autoresets_on_the_same_step_with_safety_gymnasium_keys():
    envs = safety_gymnasium.vector.make(ID, num_envs=2, asynchronous=False, max_episode_steps=LENGTH, **PARAMS)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP and envs.num_envs == 2
    envs.reset(seed=0)
    for _ in range(LENGTH):
        obs, rewards, costs, terminations, truncations, infos = envs.step(np.stack([ACTION, -ACTION]))
    assert truncations.all() and costs.tolist() == [2.0, 2.0]
    np.testing.assert_array_equal(infos["final_observation"], infos["final_obs"])
    np.testing.assert_array_equal(infos["_final_observation"], [True, True])
    assert not np.array_equal(obs, infos["final_observation"])
    with pytest.raises(ValueError, match="wrappers= wraps each sub-env"):
        safety_gymnasium.vector.make(ID, num_envs=2, wrappers=[gym.wrappers.ClipAction], paper_variant=True)
