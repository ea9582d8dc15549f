"""A tiny, fast `Env` for learner tests: a point on a torus with a reward, a cost, termination and a time limit."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.env import Env, State


class TwoActionEnv(Env):
    """A test env's fixed parts: an action of two entries, ``episode_length`` steps an episode, ``dt`` seconds a step."""

    def __init__(self, episode_length: int, dt: float):
        self._episode_length = episode_length
        self._dt = dt

    @property
    def action_size(self) -> int:
        return 2

    @property
    def episode_length(self) -> int:
        return self._episode_length

    @property
    def dt(self) -> float:
        return self._dt


class ToyEnv(TwoActionEnv):
    """Point on the torus ``[-1, 1)²``; ``action`` moves it by ``0.1·a`` (wrapping around).

    Reward: diagonal progress ``0.5·(a_x + a_y)``. Cost: 1 while ``y > hazard_y``, so the reward pulls
    the point through the hazard band and a constrained learner must trade reward for cost (moving
    along x below the band is safe). Terminates on entering the pit, a disc of radius 0.15 at
    (−0.6, −0.6); truncates after ``episode_length`` steps. The torus keeps the state distribution
    bounded, so critics never have to extrapolate to bootstrap a truncated episode.
    """

    def __init__(self, episode_length: int = 16, hazard_y: float = 0.2, pit_radius: float = 0.15):
        super().__init__(episode_length, dt=0.1)
        self.hazard_y = hazard_y
        self.pit_radius = pit_radius

    def reset(self, key: jax.Array) -> State:
        pos = jax.random.uniform(key, (2,), minval=-0.5, maxval=0.5)
        zero = jnp.zeros((), jnp.float32)
        return State(data={"pos": pos}, obs=pos, reward=zero, cost=zero, done=zero, truncation=zero,
                     info={"steps": zero}, metrics={"reward/progress": zero, "cost/hazard": zero})

    def step(self, state: State, action: jax.Array) -> State:
        action = jnp.clip(action, -1.0, 1.0)
        pos = jnp.mod(state.data["pos"] + 0.1 * action + 1.0, 2.0) - 1.0
        t = state.info["steps"] + 1.0  # the step counter lives in info["steps"], where desynchronize offsets it
        reward = 0.5 * (action[0] + action[1])
        cost = (pos[1] > self.hazard_y).astype(jnp.float32)
        terminated = (jnp.linalg.norm(pos - jnp.asarray([-0.6, -0.6])) < self.pit_radius).astype(jnp.float32)
        truncated = (t >= self._episode_length).astype(jnp.float32) * (1.0 - terminated)
        return state.replace(
            data={"pos": pos}, obs=pos, reward=reward, cost=cost, done=jnp.maximum(terminated, truncated),
            truncation=truncated, info={**state.info, "steps": t},
            metrics={"reward/progress": reward, "cost/hazard": cost},
        )


class ToyEnvHarder(ToyEnv):
    """The toy env with a wider hazard band (cost above y = −0.2): a second "level" for curriculum tests."""

    def __init__(self, episode_length: int = 16):
        super().__init__(episode_length=episode_length, hazard_y=-0.2)


class ToyEnvTwoCosts(ToyEnv):
    """The toy env with a second cost term, ``cost/edge`` (1 while x > 0.3), added to the total cost."""

    def reset(self, key: jax.Array) -> State:
        state = super().reset(key)
        return state.replace(metrics={**state.metrics, "cost/edge": jnp.zeros((), jnp.float32)})

    def step(self, state: State, action: jax.Array) -> State:
        state = super().step(state, action)
        edge = (state.obs[0] > 0.3).astype(jnp.float32)
        return state.replace(cost=state.cost + edge, metrics={**state.metrics, "cost/edge": edge})
