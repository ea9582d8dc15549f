"""SquaredCostPPO: a learner that changes one hook of PPO."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from crax.learners import PPO, PPOConfig


@dataclasses.dataclass(frozen=True)
class SquaredCostConfig(PPOConfig):
    """PPO's hyperparameters plus the penalty's weight (``--cost-weight`` on the command line)."""

    cost_weight: float = 1.0
    """w in the trained reward r − w·c²."""


class SquaredCostPPO(PPO, name="ppo-squared-cost", config=SquaredCostConfig):
    """PPO on ``r − w·c²``: a fixed penalty growing with the square of the step cost."""

    def training_reward(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        return reward - self.config.cost_weight * jnp.square(cost)
