"""crax.gymnasium.sb3: a Stable-Baselines3 VecEnv over one batched crax env, trained with SB3's PPO.

Skipped without stable-baselines3 (``pip install crax[sb3]``, torch first). One compiled
4-env PointVelocity1 with 16-step episodes.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="stable-baselines3 is not installed (the crax[sb3] extra)")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

import crax.gymnasium.sb3 as crax_sb3  # noqa: E402

NUM_ENVS, LENGTH = 4, 16


@pytest.fixture(scope="module")
def venv() -> crax_sb3.CraxSB3VecEnv:
    return crax_sb3.make("PointVelocity1", NUM_ENVS, episode_length=LENGTH, velocity_threshold=0.01)


@pytest.mark.slow
def test_vec_env_layout_seeds_and_episode_ends(venv):
    venv.seed(7)
    first = venv.reset()
    np.testing.assert_array_equal(first, venv.venv.reset(seed=[7, 8, 9, 10])[0])  # SB3's seed + i per env
    venv.seed(7)
    np.testing.assert_array_equal(venv.reset(), first)
    actions = np.tile(np.array([[0.6, -0.2]], np.float32), (NUM_ENVS, 1))
    for t in range(LENGTH):
        obs, rewards, dones, infos = venv.step(actions)
        assert len(infos) == NUM_ENVS and rewards.shape == dones.shape == (NUM_ENVS,)
        assert [i["cost"] for i in infos] == np.asarray(venv.venv.state.cost).tolist()
        if t < LENGTH - 1:
            assert not dones.any() and "terminal_observation" not in infos[0]
    assert dones.all() and all(i["TimeLimit.truncated"] for i in infos)
    for i in range(NUM_ENVS):  # the episode's last observation; the returned one is the next episode's first
        assert infos[i]["terminal_observation"].shape == obs[i].shape
        assert not np.array_equal(infos[i]["terminal_observation"], obs[i])
    assert venv.get_attr("render_mode") == [None] * NUM_ENVS
    assert venv.env_is_wrapped(VecMonitor) == [False] * NUM_ENVS
    with pytest.raises(NotImplementedError, match="one batched env"):
        venv.env_method("reset", indices=[0])


@pytest.mark.slow  # a learning run: SB3's PPO (torch) over 2,048 env steps
def test_sb3_ppo_trains_a_few_thousand_steps(venv):
    monitored = VecMonitor(venv)
    model = PPO("MlpPolicy", monitored, n_steps=128, batch_size=128, n_epochs=2, seed=0, device="cpu",
                stats_window_size=1000)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    lengths = [e["l"] for e in model.ep_info_buffer]
    assert len(lengths) >= 2048 // LENGTH - NUM_ENVS and set(lengths) == {LENGTH}
    assert all(np.isfinite(e["r"]) for e in model.ep_info_buffer)
