"""Multi-agent envs: one physics step for all agents, an agent axis on what each agent acts on and receives.

A :class:`MultiAgentEnv` is an :class:`~crax.core.env.Env` whose arrays carry the agents on a leading
axis (docs/DECISIONS.md, decision 88): ``step`` takes actions ``(A, a)`` and returns a
:class:`~crax.core.env.State` with ``obs`` ``(A, o)``, ``reward`` and ``cost`` ``(A,)``, one ``done`` and
``truncation`` for the episode (the agents share it), and ``info["global_state"]`` (what a centralised
critic reads). Agents whose observation or action is shorter than the longest are zero-padded to ``o``
and ``a``; :attr:`MultiAgentEnv.observation_sizes` and :attr:`MultiAgentEnv.action_sizes` give each
agent's own size, :meth:`MultiAgentEnv.observation_mask` and :meth:`MultiAgentEnv.action_mask` mark the
real entries (a padded action entry is ignored). Stacked arrays keep ``jit``, ``vmap`` and the
single-agent wrappers (:class:`~crax.core.env.Vmap`, :class:`~crax.core.env.AutoReset`,
:class:`~crax.core.env.EpisodeStats`: per-agent returns and costs) as they are; :meth:`MultiAgentEnv.split`
and :meth:`MultiAgentEnv.stack` convert to and from the per-agent dicts keyed by agent name that
PettingZoo-style faces use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from crax.core.env import Env, State, Wrapper


class MultiAgentEnv(Wrapper):
    """A multi-agent view of an env: agents named :attr:`agents`, their arrays stacked on a leading agent
    axis, zero-padded to the longest (module docstring). Subclasses set :attr:`agents`,
    :attr:`observation_sizes` and :attr:`action_sizes` and implement ``reset`` and ``step``."""

    agents: tuple[str, ...]
    """The agents' names, in the order of the agent axis."""
    observation_sizes: tuple[int, ...]
    """Each agent's own observation size (the rest of its row of ``obs`` is zeros)."""
    action_sizes: tuple[int, ...]
    """Each agent's own action size (the rest of its row of the action is ignored)."""

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def action_size(self) -> int:
        """The padded per-agent action size ``a`` (the longest agent's)."""
        return max(self.action_sizes)

    @property
    def action_shape(self) -> tuple[int, int]:
        """The shape of one env's action: ``(agents, a)``."""
        return (self.num_agents, self.action_size)

    @property
    def global_state_size(self) -> int:
        """The length of ``info["global_state"]``."""
        return int(jax.eval_shape(self.reset, jax.random.key(0)).info["global_state"].shape[-1])

    def observation_mask(self) -> np.ndarray:
        """``(A, o)`` bool: the real entries of each agent's observation row."""
        return _mask(self.observation_sizes)

    def action_mask(self) -> np.ndarray:
        """``(A, a)`` bool: the real entries of each agent's action row."""
        return _mask(self.action_sizes)

    @staticmethod
    def team_state(state: State) -> State:
        """The single-agent state under an agents' view whose reward and cost every agent shares: the global
        state as its observation, agent 0's reward and cost (what the view's ``step`` hands the env below)."""
        info = {k: v for k, v in state.info.items() if k != "global_state"}
        return state.replace(obs=state.info["global_state"], reward=state.reward[0], cost=state.cost[0], info=info)

    def split(self, x: Any, sizes: Sequence[int] | None = None) -> dict[str, Any]:
        """Rows of ``x`` (agent axis first; any axes after the agent's row are kept) as a dict by agent name,
        each cut to its agent's size when ``sizes`` is given (e.g. :attr:`observation_sizes`)."""
        if sizes is None:
            return {name: x[i] for i, name in enumerate(self.agents)}
        return {name: x[i, ..., :n] for i, (name, n) in enumerate(zip(self.agents, sizes, strict=True))}

    def stack(self, per_agent: Mapping[str, jax.Array | np.ndarray], size: int | None = None) -> jax.Array:
        """Per-agent arrays (a dict by agent name) stacked on a leading agent axis, each zero-padded along its
        last axis to ``size`` (default: the longest); the inverse of :meth:`split`. Raises ValueError naming
        the agents when a name is missing or unknown."""
        if set(per_agent) != set(self.agents):
            raise ValueError(f"expected one entry per agent {list(self.agents)}, got {sorted(per_agent)}")
        rows = [jnp.asarray(per_agent[name]) for name in self.agents]
        width = size or max(r.shape[-1] for r in rows)
        pad = lambda r: jnp.pad(r, [(0, 0)] * (r.ndim - 1) + [(0, width - r.shape[-1])])  # noqa: E731
        return jnp.stack([pad(r) for r in rows])


def _mask(sizes: Sequence[int]) -> np.ndarray:
    return np.arange(max(sizes))[None, :] < np.asarray(sizes)[:, None]


class TeamView(Wrapper):
    """A :class:`MultiAgentEnv` as one flat env for a centralised learner (MAPPO's view): the observation is
    every agent's row (zero-padded, ``agents · o``) followed by the global state, the action is every agent's
    row flattened (``agents · a``; a padded entry is ignored), the reward and cost are the agents' means
    (the team's reward and cost where the agents share them, as in Safe MaMuJoCo). :attr:`layout` is
    ``(agents, o, a, global state size)``, what a learner needs to cut the rows apart again."""

    def __init__(self, env: Env):
        super().__init__(env)
        agents = multi_agent(env)
        obs = cast(jax.ShapeDtypeStruct, agents.state_shapes.obs)  # a multi-agent env's rows are flat
        self.agents = agents
        self.layout = (agents.num_agents, int(obs.shape[-1]), agents.action_size, agents.global_state_size)

    @property
    def action_size(self) -> int:
        return self.layout[0] * self.layout[2]

    @property
    def action_shape(self) -> tuple[int, ...]:
        return (self.action_size,)

    def _view(self, state: State) -> State:
        obs = jnp.concatenate([cast(jax.Array, state.obs).reshape(-1), state.info["global_state"]])
        return state.replace(obs=obs, reward=jnp.mean(state.reward), cost=jnp.mean(state.cost),
                             info={**state.info, "agents": {"reward": state.reward, "cost": state.cost}})

    def reset(self, key: jax.Array) -> State:
        return self._view(self.env.reset(key))

    def step(self, state: State, action: jax.Array) -> State:
        agents, o = self.layout[0], self.layout[1]
        info = {k: v for k, v in state.info.items() if k != "agents"}
        inner = state.replace(obs=cast(jax.Array, state.obs)[: agents * o].reshape(agents, o), reward=state.info["agents"]["reward"],
                              cost=state.info["agents"]["cost"], info=info)
        return self._view(self.env.step(inner, action.reshape(self.agents.action_shape)))


def multi_agent(env: Env) -> MultiAgentEnv:
    """The :class:`MultiAgentEnv` ``env`` is or wraps (through :class:`~crax.core.env.Wrapper`'s ``env``);
    a ValueError naming what it found otherwise."""
    found = env
    while not isinstance(found, MultiAgentEnv):
        if not isinstance(found, Wrapper):
            raise ValueError(f"a multi-agent learner trains on a multi-agent env (crax.core.multi_agent.MultiAgentEnv, "
                             f"e.g. crax.tasks.multi_agent.make_ma); got {type(env).__name__} over "
                             f"{type(found).__name__}")
        found = found.env
    return found
