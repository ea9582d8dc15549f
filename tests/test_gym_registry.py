"""crax's envs in Gymnasium's registry: ``gymnasium.make("crax/<id>")`` and ``gymnasium.make_vec``
build crax's Gymnasium faces, for crax's ids and Safety-Gymnasium's.

Compiled programs: PointVelocity1's single and vector env with tests/test_gymnasium.py's parameters
(shared through the compile cache); the Safety-Gymnasium id only by ``jax.eval_shape``.
"""

from __future__ import annotations

import sys

import gymnasium
import numpy as np
import pytest

import crax
import crax.gymnasium as cg
from crax.gymnasium.registration import register_envs
from tests.test_gymnasium import NUM_ENVS, VELOCITY


@pytest.fixture
def registry(monkeypatch):
    """An empty Gymnasium registry for the test (the process's own is left as it was)."""
    fresh: dict = {}
    monkeypatch.setattr(gymnasium.envs.registration, "registry", fresh)
    monkeypatch.setattr(gymnasium, "registry", fresh)
    return fresh


def test_every_crax_id_is_registered_once_under_crax(registry):
    names = register_envs()
    assert names == [f"crax/{i}" for i in crax.env_ids()]
    assert "crax/PointGoal1" in names and "crax/SafetyPointGoal1-v0" in names
    assert set(registry) == set(names)
    spec = registry["crax/SafetyAntVelocity-v1"]
    assert (spec.namespace, spec.name, spec.version) == ("crax", "SafetyAntVelocity", 1)
    assert spec.kwargs == {"env_id": "SafetyAntVelocity-v1"} and spec.max_episode_steps is None
    assert register_envs(["PointGoal1"]) == ["crax/PointGoal1"]  # again: nothing re-registered, no warning
    with pytest.raises(ValueError, match=r"not crax env ids: 'PointGoal9'; valid ids: .*PointGoal1"):
        register_envs(["PointGoal9"])


@pytest.mark.slow
def test_make_gives_the_crax_env_with_gymnasiums_step(registry):
    register_envs(["PointVelocity1"])
    env = gymnasium.make("crax/PointVelocity1", **VELOCITY)
    assert isinstance(env.unwrapped, cg.CraxEnv) and env.spec is not None and env.spec.id == "crax/PointVelocity1"
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(np.ones(2, np.float32))
    assert obs.shape == env.observation_space.shape and "cost" in info
    same = cg.make("PointVelocity1", **VELOCITY)  # the direct face, same seed and action: same step
    same.reset(seed=0)
    obs2, reward2, *_ = same.step(np.ones(2, np.float32))
    np.testing.assert_array_equal(obs, obs2)
    assert reward == reward2


def test_make_vec_gives_one_batched_vector_env(registry):
    register_envs(["PointVelocity1"])
    envs = gymnasium.make_vec("crax/PointVelocity1", num_envs=NUM_ENVS, **VELOCITY)
    assert isinstance(envs, cg.CraxVectorEnv) and envs.num_envs == NUM_ENVS
    one = gymnasium.make_vec("crax/PointVelocity1", num_envs=1, **VELOCITY)
    assert isinstance(one, cg.CraxVectorEnv) and one.num_envs == 1  # a vector env even of one
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1, got 0"):
        cg.make_vector("PointVelocity1", 0)


def test_safety_gymnasium_ids_give_safety_gymnasiums_task(registry):
    register_envs(["SafetyPointGoal1-v0"])
    env = gymnasium.make("crax/SafetyPointGoal1-v0", disable_env_checker=True)
    assert env.unwrapped.env.id == "SafetyPointGoal1-v0"
    assert env.observation_space == cg.make("SafetyPointGoal1-v0").observation_space


def test_the_registering_module_serves_ids_named_with_it(registry, monkeypatch):
    monkeypatch.delitem(sys.modules, "crax.gymnasium.registered", raising=False)
    env = gymnasium.make("crax.gymnasium.registered:crax/PointVelocity1", disable_env_checker=True, **VELOCITY)
    assert isinstance(env.unwrapped, cg.CraxEnv) and len(registry) == len(crax.env_ids())
