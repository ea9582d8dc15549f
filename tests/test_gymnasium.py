"""crax.gymnasium: Gymnasium's env checker, the vector env's same-step autoreset, costs, seeding,
the Safety-Gymnasium 6-tuple, and input errors (next-step autoreset, Gymnasium's vector wrappers
and per-env seeds: tests/test_gym_vector_wrappers.py).

Three compiled programs, shared through module-level caches: PointGoal1 and PointVelocity1 as
single envs, and PointVelocity1 as a 3-env vector env with same-step autoreset. The vector env's results are checked
against the single PointVelocity1's jitted step and reset on slices of the batched state (the
two envs have the same parameters, so the same model).
"""

from __future__ import annotations

import functools
import warnings

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import crax
import crax.gymnasium as cg
from crax.gymnasium import safety
from tests import trees

TAU, WEIGHT, LENGTH = 0.01, 2.0, 4
VELOCITY = dict(episode_length=LENGTH, velocity_threshold=TAU, cost_weight=WEIGHT)
"""PointVelocity1 with short episodes and a cost of 2 whenever the point moves faster than 1 cm/s."""

NUM_ENVS = 3
INFINITE_BOX = ("minimum value is -infinity", "maximum value is infinity")
"""check_env's warnings about the Box(-inf, inf) observation space, which the adapter declares
on purpose: crax observations are unbounded (velocities, accelerations)."""


@functools.cache
def goal_env() -> cg.CraxEnv:
    return cg.make("PointGoal1", episode_length=5)


@functools.cache
def velocity_env() -> cg.CraxEnv:
    return cg.make("PointVelocity1", **VELOCITY)


@functools.cache
def vector_env() -> cg.CraxVectorEnv:
    return cg.make("PointVelocity1", num_envs=NUM_ENVS, autoreset_mode=AutoresetMode.SAME_STEP, **VELOCITY)


def row(state: crax.State, i: int) -> crax.State:
    """Env ``i`` of a batched state, without the vector env's auto-reset entries."""
    one = trees.take(state, i)
    return one.replace(info={k: v for k, v in one.info.items() if k not in ("autoreset_key", "final_obs")})


def expected_cost(velocity):
    return WEIGHT * (np.asarray(velocity) > TAU)


# --- the single env ---------------------------------------------------------------------------


@pytest.mark.parametrize("make_env", [goal_env, velocity_env], ids=["PointGoal1", "PointVelocity1"])
@pytest.mark.slow
def test_check_env_passes_with_only_the_unbounded_observation_warnings(make_env):
    env = make_env()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    unexpected = [str(w.message) for w in caught if not any(s in str(w.message) for s in INFINITE_BOX)]
    assert unexpected == []
    crax_env = env.env
    assert env.observation_space == gym.spaces.Box(-np.inf, np.inf, (crax_env.observation_size,), np.float32)
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, (crax_env.action_size,), np.float32)


def test_step_returns_numpy_values_with_the_cost_and_every_metric_in_info():
    env = velocity_env()
    env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step(np.array([0.8, -0.3], np.float32))
    state = env.state
    assert isinstance(obs, np.ndarray) and obs.dtype == np.float32 and obs.flags.writeable
    np.testing.assert_array_equal(obs, np.asarray(state.obs))
    assert type(reward) is float and reward == float(state.reward)
    assert (type(terminated), type(truncated)) == (bool, bool)
    assert info["cost"] == float(state.cost) == expected_cost(info["velocity"]) == info["cost/velocity"]
    assert info["cost"] == WEIGHT  # the point moves: the cost is on
    for name, value in state.metrics.items():
        assert info[name] == pytest.approx(float(value))
    assert {"reward/forward", "reward/ctrl", "reward/healthy", "cost/velocity"} <= set(info)


def test_truncated_at_the_time_limit_and_terminated_on_a_broken_state():
    env = velocity_env()
    env.reset(seed=0)
    ends = [env.step(np.zeros(2, np.float32))[2:4] for _ in range(LENGTH)]
    assert ends == [(False, False)] * (LENGTH - 1) + [(False, True)]

    env.reset(seed=0)
    data = env.state.data
    env.state = env.state.replace(data=data.replace(qvel=data.qvel * jnp.nan))
    _, _, terminated, truncated, info = env.step(np.zeros(2, np.float32))
    assert (terminated, truncated) == (True, False)
    assert info["env/nonfinite_state"] == 1.0


def test_reset_seed_is_reproducible_and_continues_the_key_sequence():
    env = goal_env()
    first, _ = env.reset(seed=5)
    second, _ = env.reset()
    assert np.array_equal(env.reset(seed=5)[0], first)
    assert np.array_equal(env.reset()[0], second)
    assert not np.array_equal(first, second)
    assert not np.array_equal(env.reset(seed=6)[0], first)
    # the documented contract: a seed starts the key sequence at jax.random.key(seed), each reset splits it
    key = jax.random.split(jax.random.key(5))[1]
    np.testing.assert_array_equal(first, np.asarray(env._reset_fn(key).obs))


@pytest.mark.slow
def test_wrong_action_shape_names_the_expected_shape():
    env = velocity_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"expects \(2,\)"):
        env.step(np.zeros(3, np.float32))
    venv = vector_env()
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"expects \(3, 2\) \(num_envs, action_size\)"):
        venv.step(np.zeros((2, 2), np.float32))


def test_step_before_reset_is_a_reset_needed_error():
    env = cg.CraxEnv(velocity_env().env)  # a fresh adapter of the same crax env: nothing compiles
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(2, np.float32))


# --- make and its errors ----------------------------------------------------------------------


def test_render_mode_other_than_rgb_array_is_rejected_listing_the_modes():
    with pytest.raises(ValueError, match=r"render_mode must be None or one of 'rgb_array'; got 'human'"):
        cg.make("PointVelocity1", render_mode="human")
    with pytest.raises(ValueError, match="render_mode"):
        cg.CraxVectorEnv(velocity_env().env, 2, render_mode="rgb")


def test_render_without_a_render_mode_warns_and_returns_none():
    env = velocity_env()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode='rgb_array'"):
        assert env.render() is None


@pytest.mark.slow
def test_rgb_array_renders_the_current_state_and_each_env_of_a_batch():
    from crax import render

    size = {"width": 64, "height": 48}
    env, venv = velocity_env(), vector_env()
    env.reset(seed=0)
    env.step(np.ones(2, np.float32))
    venv.reset(seed=0)
    venv.step(np.ones((NUM_ENVS, 2), np.float32))
    # fresh adapters of the same crax envs, given the states: nothing compiles
    single = cg.CraxEnv(env.env, "rgb_array", size)
    single.state = env.state
    vector = cg.CraxVectorEnv(venv.env, NUM_ENVS, "rgb_array", size)
    vector.state = venv.state
    frame = single.render()
    assert frame.shape == (48, 64, 3) and frame.dtype == np.uint8
    np.testing.assert_array_equal(frame, render.render(env.env, env.state, **size))
    frames = vector.render()  # one frame per env, as Gymnasium's vector RecordVideo asserts
    assert isinstance(frames, tuple) and len(frames) == NUM_ENVS
    for i in range(NUM_ENVS):
        np.testing.assert_array_equal(frames[i], render.render(venv.env, row(venv.state, i), **size))
    assert not np.array_equal(frames[0], frames[1])
    single.close()
    vector.close()
    assert cg.make("PointVelocity1", render_mode="rgb_array", camera="top", width=32).render_kwargs == {
        "camera": "top", "width": 32}


def test_bad_ids_and_parameters_raise_crax_errors_unchanged():
    for kwargs in (dict(env_id="PointGoal9"), dict(env_id="PointGoal1", goal_size=1.0),
                   dict(env_id="PointGoal1", goal_radius=-1.0)):
        with pytest.raises(ValueError) as ours:
            cg.make(**kwargs)
        with pytest.raises(ValueError) as theirs:
            crax.make(kwargs.pop("env_id"), **kwargs)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1, got 0"):
        cg.make("PointGoal1", num_envs=0)


def test_make_picks_the_env_class_and_passes_parameters():
    single = cg.make("PointVelocity1", velocity_threshold=0.5)
    assert isinstance(single, cg.CraxEnv) and float(single.env.suite.constraints[0].threshold[...]) == 0.5
    vector = cg.make("PointVelocity1", num_envs=2, velocity_threshold=0.5)
    assert isinstance(vector, cg.CraxVectorEnv) and vector.num_envs == 2
    assert vector.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # the default, Gymnasium's
    assert isinstance(cg.make("PointVelocity1", safety_gymnasium=True), cg.SafetyGymnasiumWrapper)
    assert isinstance(cg.make("PointVelocity1", num_envs=2, safety_gymnasium=True), cg.SafetyGymnasiumVectorWrapper)


# --- the vector env ---------------------------------------------------------------------------


def test_vector_spaces_and_autoreset_mode():
    venv = vector_env()
    assert venv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert venv.single_observation_space == velocity_env().observation_space
    assert venv.single_action_space == velocity_env().action_space
    assert venv.observation_space.shape == (NUM_ENVS, 12) and venv.observation_space.dtype == np.float32
    assert venv.action_space == gym.spaces.Box(-1.0, 1.0, (NUM_ENVS, 2), np.float32)


def test_vector_time_limit_same_step_autoreset_against_the_crax_state():
    venv, single = vector_env(), velocity_env()
    venv.reset(seed=0)
    actions = np.array([[0.9, 0.1], [-0.5, 0.7], [0.2, -0.8]], np.float32)
    for _ in range(LENGTH - 1):
        *_, info = venv.step(actions)
        assert "final_obs" not in info and "final_info" not in info
        np.testing.assert_array_equal(info["cost"], np.asarray(venv.state.cost))
        np.testing.assert_array_equal(info["cost"], expected_cost(info["velocity"]))
    before = venv.state
    obs, rewards, terminations, truncations, info = venv.step(actions)
    assert not terminations.any() and truncations.all()
    assert info["_final_obs"].all() and info["_final_info"].all()
    for i in range(NUM_ENVS):
        last = single._step_fn(row(before, i), actions[i])  # the finished episode's last step
        np.testing.assert_allclose(info["final_obs"][i], np.asarray(last.obs), rtol=1e-5, atol=1e-6)
        assert info["final_info"]["cost"][i] == info["cost"][i] == float(last.cost)
        assert info["final_info"]["velocity"][i] == pytest.approx(float(last.metrics["velocity"]), rel=1e-5)
        assert rewards[i] == pytest.approx(float(last.reward), rel=1e-5, abs=1e-7)
        # the returned observation is the new episode's: crax's reset from the env's auto-reset key
        fresh = single._reset_fn(jax.random.split(before.info["autoreset_key"][i])[1])
        np.testing.assert_allclose(obs[i], np.asarray(fresh.obs), rtol=1e-5, atol=1e-6)
    assert np.asarray(venv.state.info["steps"]).tolist() == [0] * NUM_ENVS
    assert not np.allclose(obs, info["final_obs"])
    *_, info = venv.step(actions)  # the first step of the new episodes
    assert "final_obs" not in info and np.asarray(venv.state.info["steps"]).tolist() == [1] * NUM_ENVS


def test_vector_one_env_terminates_the_others_go_on():
    venv = vector_env()
    venv.reset(seed=1)
    zeros = np.zeros((NUM_ENVS, 2), np.float32)
    venv.step(zeros)
    data = venv.state.data
    venv.state = venv.state.replace(data=data.replace(qvel=data.qvel.at[1].set(jnp.nan)))
    obs, _, terminations, truncations, info = venv.step(zeros)
    done = np.array([False, True, False])
    np.testing.assert_array_equal(terminations, done)
    assert not truncations.any()
    np.testing.assert_array_equal(info["_final_obs"], done)
    np.testing.assert_array_equal(info["final_obs"][[0, 2]], 0.0)  # rows of the envs that go on are empty
    np.testing.assert_array_equal(info["final_info"]["env/nonfinite_state"], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(info["final_info"]["_env/nonfinite_state"], done)
    np.testing.assert_array_equal(info["env/nonfinite_state"], [0.0, 1.0, 0.0])
    assert np.asarray(venv.state.info["steps"]).tolist() == [2, 0, 2]
    np.testing.assert_array_equal(obs, np.asarray(venv.state.obs))
    assert np.isfinite(obs).all()


def test_vector_reset_seed_is_reproducible():
    venv = vector_env()
    first, _ = venv.reset(seed=7)
    np.testing.assert_array_equal(venv.reset(seed=7)[0], first)
    assert not np.array_equal(venv.reset(seed=8)[0], first)
    assert len({tuple(r) for r in first}) == NUM_ENVS  # each env its own start
    with pytest.raises(ValueError, match="a list of 3 such ints"):
        venv.reset(seed=[1, 2])


def test_gymnasium_episode_statistics_read_the_same_step_autoreset():
    stats = gym.wrappers.vector.RecordEpisodeStatistics(vector_env())
    stats.reset(seed=2)
    returns = np.zeros(NUM_ENVS)
    for _ in range(LENGTH):
        _, rewards, _, _, info = stats.step(stats.action_space.sample())
        returns += rewards
    np.testing.assert_array_equal(info["episode"]["l"], [LENGTH] * NUM_ENVS)
    np.testing.assert_allclose(info["episode"]["r"], returns, rtol=1e-6)


# --- Safety-Gymnasium -------------------------------------------------------------------------


def test_safety_gymnasium_step_returns_the_cost_as_third_value():
    env = cg.SafetyGymnasiumWrapper(velocity_env())
    obs, info = env.reset(seed=4)
    out = env.step(np.array([1.0, 0.0], np.float32))
    assert len(out) == 6
    obs, reward, cost, terminated, truncated, info = out
    assert cost == info["cost"] == float(env.unwrapped.state.cost) == expected_cost(info["velocity"])
    assert (terminated, truncated) == (False, False) and obs.shape == (12,)

    venv = cg.SafetyGymnasiumVectorWrapper(vector_env())
    venv.reset(seed=4)
    obs, rewards, costs, terminations, truncations, info = venv.step(np.ones((NUM_ENVS, 2), np.float32))
    assert costs.shape == (NUM_ENVS,)
    np.testing.assert_array_equal(costs, np.asarray(venv.unwrapped.state.cost))
    np.testing.assert_array_equal(costs, expected_cost(info["velocity"]))


def test_safety_module_takes_safety_gymnasium_ids():
    assert safety.crax_id("SafetyPointGoal1-v0") == "PointGoal1"
    assert safety.crax_id("SafetyHalfCheetahVelocity1-v1") == "HalfCheetahVelocity1"
    assert safety.crax_id("PointGoal1") == "PointGoal1"
    assert safety.crax_id("SafetyPointGoal1") == "PointGoal1"
    with pytest.raises(ValueError, match="version v7 is not one Safety-Gymnasium registers; use SafetyPointGoal1-v0"):
        safety.crax_id("SafetyPointGoal1-v7")
    env = safety.make("SafetyPointVelocity1-v0", velocity_threshold=0.5, paper_variant=True)  # the paper's task
    assert isinstance(env, cg.SafetyGymnasiumWrapper) and env.unwrapped.env.id == "PointVelocity1"
    with pytest.raises(ValueError, match="valid"):
        safety.make("SafetyPointRun0-v0", paper_variant=True)  # the paper has no Run
    with pytest.raises(ValueError, match="served: SafetyPointGoal0-v0"):
        safety.make("SafetyPointGoal3-v0")
