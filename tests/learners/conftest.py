"""Shared fixtures for learner tests: the toy env and tiny configs that compile and run fast."""

from __future__ import annotations

import dataclasses

import pytest

from crax.learners import BUILTIN_LEARNERS, ConstrainedPPO
from tests.learners.toy_env import ToyEnv

TOY_ENV_ID = "tests.learners.toy_env:ToyEnv"

PPO_FAMILY = [c for c in BUILTIN_LEARNERS if issubclass(c, ConstrainedPPO) and not c.multi_agent]
"""The built-in single-agent learners of the PPO family (MAPPO-Lag's are tests/learners/test_mappo_lag.py's, the
off-policy family's tests/learners/test_off_policy.py's)."""

TINY = dict(
    num_envs=8, unroll_length=4, batch_size=4, num_minibatches=4, num_epochs=2,
    actor_hidden=(16,), critic_hidden=(16,), eval_envs=4, num_evals=1, checkpoint_every=2,
)
"""One iteration = 8 envs × 8 steps = 64 env steps; 4 minibatches of 16 transitions."""


def tiny(config_cls, **overrides):
    return config_cls(**{**TINY, **overrides})


@pytest.fixture
def toy_env() -> ToyEnv:
    return ToyEnv()


@pytest.fixture
def tiny_config():
    def make(config_cls, **overrides):
        return tiny(config_cls, **overrides)

    return make


def replace(config, **changes):
    return dataclasses.replace(config, **changes)
