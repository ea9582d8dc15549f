"""CraxVectorEnv's next-step autoreset (the default) against same-step, Gymnasium's own vector
wrappers on it, per-env seed lists and one frame per env.

Two compiled vector envs of PointVelocity1 (3 envs, 4-step episodes), one per autoreset mode,
built once for the module.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vw

import crax.gymnasium as cg

LENGTH, NUM_ENVS = 4, 3
VELOCITY = dict(episode_length=LENGTH, velocity_threshold=0.01, cost_weight=2.0)
ACTIONS = np.array([[0.9, 0.1], [-0.5, 0.7], [0.2, -0.8]], np.float32)


@pytest.fixture(scope="module")
def next_env() -> cg.CraxVectorEnv:
    return cg.make("PointVelocity1", num_envs=NUM_ENVS, **VELOCITY)


@pytest.fixture(scope="module")
def same_env(next_env) -> cg.CraxVectorEnv:
    return cg.CraxVectorEnv(next_env.env, NUM_ENVS, autoreset_mode=AutoresetMode.SAME_STEP)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_next_step_is_the_default_and_bad_modes_list_the_choices(next_env):
    assert next_env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    with pytest.raises(ValueError, match=r"autoreset_mode must be one of AutoresetMode.NEXT_STEP \('NextStep'\), "
                                         r"AutoresetMode.SAME_STEP \('SameStep'\); got 'disabled'"):
        cg.make("PointVelocity1", num_envs=2, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="autoreset_mode is for vector envs"):
        cg.make("PointVelocity1", autoreset_mode="SameStep")
    assert cg.CraxVectorEnv(next_env.env, 2, autoreset_mode="same_step").autoreset_mode is AutoresetMode.SAME_STEP


@pytest.mark.slow
def test_next_step_returns_the_last_observation_then_resets_as_same_step_did(next_env, same_env):
    next_env.reset(seed=0)
    same_env.reset(seed=0)
    for _ in range(LENGTH - 1):
        n, s = next_env.step(ACTIONS), same_env.step(ACTIONS)
        close(n[0], s[0])
    obs, rewards, terminations, truncations, info = next_env.step(ACTIONS)
    s_obs, s_rewards, _, s_truncations, s_info = same_env.step(ACTIONS)
    assert truncations.all() and not terminations.any() and s_truncations.all()
    close(obs, s_info["final_obs"])  # the finished episode's last observation, not the new one
    close(rewards, s_rewards)
    close(info["cost"], s_info["cost"])
    assert "final_obs" not in info
    # the next call resets every env, ignoring the actions: same-step's new episodes, nothing earned
    obs, rewards, terminations, truncations, info = next_env.step(-ACTIONS)
    close(obs, s_obs)
    assert not rewards.any() and not info["cost"].any() and not info["velocity"].any()
    assert not terminations.any() and not truncations.any()
    assert np.asarray(next_env.state.info["steps"]).tolist() == [0] * NUM_ENVS
    close(next_env.step(ACTIONS)[0], same_env.step(ACTIONS)[0])  # and the new episodes go on alike


def test_next_step_resets_only_the_env_that_finished(next_env):
    next_env.reset(seed=1)
    next_env.step(ACTIONS)
    data = next_env.state.data
    next_env.state = next_env.state.replace(data=data.replace(qvel=data.qvel.at[1].set(jnp.nan)))
    obs, _, terminations, truncations, info = next_env.step(ACTIONS)
    np.testing.assert_array_equal(terminations, [False, True, False])
    assert info["env/nonfinite_state"].tolist() == [0.0, 1.0, 0.0]
    # env 1 is not reset yet: the state and observation are its episode's last
    assert np.asarray(next_env.state.info["steps"]).tolist() == [2, 2, 2]
    np.testing.assert_array_equal(obs, np.asarray(next_env.state.obs))
    obs, rewards, terminations, _, _ = next_env.step(ACTIONS)
    assert np.asarray(next_env.state.info["steps"]).tolist() == [3, 0, 3]
    assert np.isfinite(obs).all() and rewards[1] == 0.0 and not terminations.any()


@pytest.mark.slow
def test_seed_lists_seed_each_env(next_env, same_env):
    first, _ = next_env.reset(seed=[5, 5, 9])
    np.testing.assert_array_equal(first[0], first[1])
    assert not np.array_equal(first[0], first[2])
    again, _ = next_env.reset(seed=[5, 6, 9])
    np.testing.assert_array_equal(again[[0, 2]], first[[0, 2]])  # env i depends on its own seed only
    assert not np.array_equal(again[1], first[1])
    # env i starts as a one-env vector env seeded with s_i, in either mode
    np.testing.assert_array_equal(same_env.reset(seed=[9, 9, 9])[0][0], first[2])
    np.testing.assert_array_equal(next_env.reset(seed=np.array([9, 5, 5]))[0], first[[2, 0, 1]])
    for bad in ([1, 2], [1, 2, -3], [1, 2, None], "123"):
        with pytest.raises(ValueError, match=r"seed must be None, an int in \[0, 2\*\*63\) or a list of 3 such ints"):
            next_env.reset(seed=bad)
    np.testing.assert_array_equal(next_env.reset(seed=np.int64(7))[0], next_env.reset(seed=7)[0])
    # the batch steps on from per-env seeds as from one seed
    next_env.reset(seed=[1, 2, 3])
    assert next_env.step(ACTIONS)[0].shape == (NUM_ENVS, 12)


def test_transform_and_normalize_observation_accept_the_default_env(next_env):
    shifted = vw.TransformObservation(next_env, lambda obs: obs + 1.0)
    obs, _ = shifted.reset(seed=2)
    close(obs, np.asarray(next_env.state.obs) + 1.0)
    close(shifted.step(ACTIONS)[0], np.asarray(next_env.state.obs) + 1.0)

    normalized = vw.NormalizeObservation(next_env)
    normalized.reset(seed=2)
    raw = [np.asarray(next_env.state.obs)]
    for _ in range(LENGTH + 1):  # across the episode end and the reset step
        normalized.step(ACTIONS)
        raw.append(np.asarray(next_env.state.obs))
    raw = np.concatenate(raw)
    assert normalized.obs_rms.count == pytest.approx(len(raw) + 1e-4)
    close(normalized.obs_rms.mean, raw.mean(axis=0))


def test_reward_and_action_wrappers_on_the_default_env(next_env):
    scaled = vw.TransformReward(next_env, lambda r: 10.0 * r)
    scaled.reset(seed=3)
    r = scaled.step(ACTIONS)[1]
    next_env.reset(seed=3)
    close(r, 10.0 * next_env.step(ACTIONS)[1])

    clipped = vw.ClipAction(next_env)  # actions beyond [-1, 1] are clipped before crax sees them
    clipped.reset(seed=3)
    clipped_obs = clipped.step(5.0 * ACTIONS)[0]
    next_env.reset(seed=3)
    close(clipped_obs, next_env.step(np.clip(5.0 * ACTIONS, -1.0, 1.0))[0])

    normalized = vw.NormalizeReward(next_env)
    normalized.reset(seed=3)
    for _ in range(LENGTH + 1):
        _, rewards, *_ = normalized.step(ACTIONS)
    assert np.isfinite(rewards).all() and normalized.return_rms.count > 1


def test_episode_statistics_and_dict_info_to_list_under_next_step(next_env):
    stats = vw.RecordEpisodeStatistics(next_env)
    stats.reset(seed=4)
    returns = np.zeros(NUM_ENVS)
    for _ in range(LENGTH):
        _, rewards, _, _, info = stats.step(ACTIONS)
        returns += rewards
    np.testing.assert_array_equal(info["episode"]["l"], [LENGTH] * NUM_ENVS)
    np.testing.assert_allclose(info["episode"]["r"], returns, rtol=1e-6)

    listed = vw.DictInfoToList(next_env)
    listed.reset(seed=4)
    infos = listed.step(ACTIONS)[-1]
    assert isinstance(infos, list) and len(infos) == NUM_ENVS
    assert [i["cost"] for i in infos] == np.asarray(next_env.state.cost).tolist()


@pytest.mark.slow
def test_record_video_writes_every_env_tiled(next_env, tmp_path):
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo needs moviepy (the crax[gymnasium] extra)")
    env = cg.CraxVectorEnv(next_env.env, NUM_ENVS, "rgb_array", {"width": 32, "height": 24})
    recorder = vw.RecordVideo(env, str(tmp_path), episode_trigger=lambda episode: episode == 0)
    recorder.reset(seed=0)
    for _ in range(LENGTH + 1):
        recorder.step(ACTIONS)
    recorder.close()
    videos = sorted(p.name for p in tmp_path.iterdir())
    assert videos == ["rl-video-episode-0.mp4"]
    import imageio.v3 as iio

    video = iio.imread(tmp_path / videos[0])
    # 1 reset + LENGTH steps of the first episode, the 3 envs side by side
    assert video.shape == (1 + LENGTH, 24, 3 * 32, 3)
