"""PPO-Cost: PPO on the penalized reward r − w·c with a fixed weight w."""

from __future__ import annotations

import dataclasses

import jax

from crax.core.params import ranged
from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig


@dataclasses.dataclass(frozen=True)
class PPOCostConfig(PPOConfig):
    """PPO-Cost hyperparameters: the shared PPO fields plus the cost weight."""

    cost_weight: float = ranged(1.0, ge=0)
    """Fixed weight w of the cost subtracted from the reward: PPO optimizes r − w·c."""


class PPOCost(ConstrainedPPO, name="ppo-cost", config=PPOCostConfig, reads_bound=False):
    """PPO on ``r − w·c`` (the penalty enters through the training reward, not the advantage)."""

    config: PPOCostConfig  # the instance of Config that __init__ stores

    def training_reward(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        return reward - self.config.cost_weight * cost
