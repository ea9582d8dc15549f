"""MAPPO-Lag: multi-agent PPO-Lagrangian (Gu et al., Artificial Intelligence 2023, "MAPPO-L"): one actor
shared by the agents, a centralised reward critic and cost critic, one λ per constraint.

It is PPO-Lag on the team's view of a multi-agent env (:class:`~crax.core.multi_agent.TeamView`: every
agent's observation row, then the global state; the agents' actions flattened; the team's reward and
cost). The actor reads each agent's own row with the agent's one-hot id appended and gives that agent's
Gaussian; the critics read the whole view (the global state included). The clipped surrogate takes one
probability ratio per agent (MAPPO's: each agent's ratio clipped on its own, the surrogate averaged over
agents and samples), all on the team's advantage (Â_r − λ Â_c)/(1 + λ). A padded action entry (an agent
with fewer actuators than the longest) has a fixed Gaussian (location 0, scale 1): the env ignores it and
its ratio is 1.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from crax.core.env import Env, under_episode_stats
from crax.core.multi_agent import TeamView, multi_agent
from crax.core.params import ranged
from crax.learners.on_policy.family import PPOConfig
from crax.learners.on_policy.ppo_lag import PPOLag, PPOLagConfig
from crax.learners.shared.networks import TanhGaussianActor, gaussian_log_prob


@dataclasses.dataclass(frozen=True)
class MAPPOLagConfig(PPOLagConfig):
    """MAPPO-Lag hyperparameters: PPO-Lag's, and the env's agent layout (filled from the env)."""

    agent_layout: tuple[int, int, int, int] | None = ranged(None, ge=1, integer=True, optional=True)
    """``(agents, observation row, action row, global state)`` sizes of the multi-agent env; set from the
    env by the trainer (:meth:`MAPPOLag.configure`), not by hand."""
    agent_action_sizes: tuple[int, ...] = ranged((), ge=1, integer=True)
    """Each agent's own action entries (the rest of its row is padding); set from the env with the layout."""


class MAPPOLag(PPOLag, name="mappo-lag", config=MAPPOLagConfig):
    """PPO-Lag with a shared actor over agents and a centralised critic, per-agent ratios (module docstring)."""

    config: MAPPOLagConfig
    multi_agent = True

    def __init__(self, config: PPOConfig, observation: Any, action_size: int, episode_length: int, *,
                 rngs: nnx.Rngs):
        super().__init__(config, observation, action_size, episode_length, rngs=rngs)
        layout = self.config.agent_layout
        if layout is None:
            raise ValueError("mappo-lag's agent_layout is unset: train it through a Trainer on a multi-agent env "
                             "(crax.tasks.multi_agent.make_ma), which sets it")
        agents, row, act, _ = layout
        self.actor = TanhGaussianActor(row + agents, act, tuple(config.actor_hidden), rngs=rngs,
                                       activation=config.activation, std=config.actor_std)

    @classmethod
    def configure(cls, config: Any, env: Env) -> Any:
        """The agent layout of ``env`` (a :class:`~crax.core.multi_agent.MultiAgentEnv`) in the config."""
        return dataclasses.replace(config, agent_layout=TeamView(env).layout,
                                   agent_action_sizes=multi_agent(env).action_sizes)

    @classmethod
    def wrap_env(cls, env: Env, config: Any) -> Env:
        """The team's view (:class:`~crax.core.multi_agent.TeamView`, under the episode statistics: the
        team's return and cost), under the rule's wrapper."""
        return super().wrap_env(under_episode_stats(env, TeamView), config)

    def policy(self, obs: Any) -> tuple[jax.Array, jax.Array]:
        """Every agent's Gaussian from its own row and one-hot id, flattened to ``(..., agents · a)``."""
        agents, row, act, _ = self.config.agent_layout  # type: ignore[misc]
        x = self.normalize(obs)
        rows = x[..., : agents * row].reshape(*x.shape[:-1], agents, row)
        ids = jnp.broadcast_to(jnp.eye(agents, dtype=x.dtype), (*x.shape[:-1], agents, agents))
        loc, scale = self.actor(jnp.concatenate([rows, ids], axis=-1))
        sizes = np.asarray(self.config.agent_action_sizes or (act,) * agents)
        real = np.arange(act)[None, :] < sizes[:, None]  # (agents, a): each agent's own action entries
        loc, scale = jnp.where(real, loc, 0.0), jnp.where(real, scale, 1.0)
        return loc.reshape(*x.shape[:-1], agents * act), scale.reshape(*x.shape[:-1], agents * act)

    def probability_ratio(self, mb: dict[str, jax.Array], loc: jax.Array, scale: jax.Array) -> jax.Array:
        """One ratio per sample and agent, ``(B, agents)``: each agent's log-density over its own entries."""
        agents, _, act, _ = self.config.agent_layout  # type: ignore[misc]
        per_agent = lambda x: x.reshape(*x.shape[:-1], agents, act)  # noqa: E731
        u = per_agent(mb["u"])
        new = gaussian_log_prob(u, per_agent(loc), per_agent(scale))
        old = gaussian_log_prob(u, per_agent(mb["loc"]), per_agent(mb["scale"]))
        return jnp.exp(new - old)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        """The team's mixed advantage, with an agent axis to meet the per-agent ratios."""
        return super().advantage(adv_r, adv_c, violation)[..., None]

