"""Early termination (Sun et al., 2021, "Safe Exploration by Solving Early Terminated MDP"): an episode
ends, with no reward on its last step, once the cost it has spent passes the budget. OmniSafe's
``EarlyTerminatedAdapter`` rule, for one unbatched env; crax's ``ppo-early-terminated`` and
``trpo-early-terminated`` train on it."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.env import Env, State, Wrapper, under_episode_stats


class EarlyTermination(Wrapper):
    """Ends the episode at the step where its summed cost so far exceeds ``cost_limit`` (strictly, as
    OmniSafe's ``cost_logger > cost_limit``): that step's reward becomes 0, ``done`` 1 and
    ``truncation`` 0 (a termination: nothing is bootstrapped past it). The cost spent so far is
    ``info["early_termination_cost"]``, zero at reset and after every end of an episode (OmniSafe's
    adapter keeps it over an episode that ends by the time limit: docs/DECISIONS.md, decision 81);
    ``metrics["early_termination/terminated"]`` is 1 on a step that this wrapper ended."""

    def __init__(self, env: Env, cost_limit: float):
        super().__init__(env)
        if not cost_limit >= 0:
            raise ValueError(f"EarlyTermination needs a cost_limit >= 0, got {cost_limit!r}")
        self.cost_limit = float(cost_limit)

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        zero = jnp.zeros((), jnp.float32)
        return state.replace(info={**state.info, "early_termination_cost": zero},
                             metrics={**state.metrics, "early_termination/terminated": zero})

    def step(self, state: State, action: jax.Array) -> State:
        spent = state.info["early_termination_cost"]
        state = self.env.step(state, action)
        spent = spent + state.cost
        over = spent > self.cost_limit
        done = jnp.where(over, 1.0, state.done).astype(state.done.dtype)
        return state.replace(
            reward=jnp.where(over, jnp.zeros_like(state.reward), state.reward), done=done,
            truncation=jnp.where(over, jnp.zeros_like(state.truncation), state.truncation),
            info={**state.info, "early_termination_cost": spent * (1.0 - done)},
            metrics={**state.metrics, "early_termination/terminated": over.astype(jnp.float32)},
        )


def terminate_early(env: Env, cost_limit: float) -> Env:
    """``env`` (what a learner's ``wrap_env`` receives: ``EpisodeStats`` over the task) with
    :class:`EarlyTermination` put under its :class:`EpisodeStats`, so that the episode statistics end
    where the episode does (and count the zero reward of its last step, as OmniSafe's logger does)."""
    return under_episode_stats(env, lambda inner: EarlyTermination(inner, cost_limit))
