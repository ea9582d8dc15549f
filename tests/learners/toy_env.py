"""A tiny, fast `Env` for learner tests: a 2-D point with a reward, a cost, termination and a time limit."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.env import Env, State


class ToyEnv(Env):
    """Point in the plane; ``action`` moves it by ``0.1·a``.

    Reward: progress along the diagonal, ``0.5·(a_x + a_y)``. Cost: 1 while y > ``hazard_y``, so the
    reward pulls the point into the hazard and a constrained learner must trade reward for cost.
    Terminates when the point leaves the box ``|p| ≤ 2``; truncates after ``episode_length`` steps.
    """

    def __init__(self, episode_length: int = 16, hazard_y: float = 0.2):
        self._episode_length = episode_length
        self.hazard_y = hazard_y

    @property
    def action_size(self) -> int:
        return 2

    @property
    def episode_length(self) -> int:
        return self._episode_length

    @property
    def dt(self) -> float:
        return 0.1

    def _obs(self, pos: jax.Array, t: jax.Array) -> jax.Array:
        # No time feature: with the time limit bootstrapped as a truncation, the state is Markov in pos.
        return jnp.concatenate([pos, jnp.zeros((1,), pos.dtype)])

    def reset(self, key: jax.Array) -> State:
        pos = jax.random.uniform(key, (2,), minval=-0.5, maxval=0.5)
        t = jnp.zeros((), jnp.float32)
        zero = jnp.zeros((), jnp.float32)
        return State(data={"pos": pos, "t": t}, obs=self._obs(pos, t), reward=zero, cost=zero, done=zero,
                     truncation=zero, info={"steps": t}, metrics={"reward/progress": zero, "cost/hazard": zero})

    def step(self, state: State, action: jax.Array) -> State:
        pos = state.data["pos"] + 0.1 * jnp.clip(action, -1.0, 1.0)
        t = state.data["t"] + 1.0
        reward = 0.5 * (action[0] + action[1])
        cost = (pos[1] > self.hazard_y).astype(jnp.float32)
        terminated = jnp.any(jnp.abs(pos) > 2.0).astype(jnp.float32)
        truncated = (t >= self._episode_length).astype(jnp.float32) * (1.0 - terminated)
        return state.replace(
            data={"pos": pos, "t": t}, obs=self._obs(pos, t), reward=reward, cost=cost,
            done=jnp.maximum(terminated, truncated), truncation=truncated, info={**state.info, "steps": t},
            metrics={"reward/progress": reward, "cost/hazard": cost},
        )
