"""The toy env (tests/learners/toy_env.py) as a two-agent team, for the multi-agent learners' tests: agent_0
moves the point along x and sees (x, y), agent_1 moves it along y and sees y alone (its row zero-padded);
both get the toy's reward and cost; the global state is the point."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.env import State
from crax.core.multi_agent import MultiAgentEnv
from tests.learners.toy_env import ToyEnv


class ToyTeamEnv(MultiAgentEnv):
    """:class:`ToyEnv` split between two agents (module docstring)."""

    agents = ("agent_0", "agent_1")
    observation_sizes = (2, 1)
    action_sizes = (1, 1)

    def __init__(self, episode_length: int = 16):
        super().__init__(ToyEnv(episode_length=episode_length))

    def _view(self, inner: State) -> State:
        pos = inner.obs
        rows = jnp.stack([pos, jnp.stack([pos[1], jnp.zeros((), pos.dtype)])])
        return inner.replace(obs=rows, reward=jnp.broadcast_to(inner.reward, (2,)),
                             cost=jnp.broadcast_to(inner.cost, (2,)), info={**inner.info, "global_state": pos})

    def reset(self, key: jax.Array) -> State:
        return self._view(self.env.reset(key))

    def step(self, state: State, action: jax.Array) -> State:
        return self._view(self.env.step(self.team_state(state), action[:, 0]))
