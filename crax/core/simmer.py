"""Simmer's safety state (Sootla et al., 2022, "Effects of Safety State Augmentation on Safe
Exploration"): Saute's remaining budget, spent against a budget that a controller moves between
training iterations (OmniSafe's ``SimmerAdapter``), for one unbatched env."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.env import SauteBudget, State


def discounted_budget(bound: float | jax.Array, discount: float, horizon: int) -> float | jax.Array:
    """``d (1 − γ^T)/((1 − γ) T)``: an episodic cost ``d`` in the units of Saute's and Simmer's budget
    (the discounted cost of spending ``d`` evenly over ``T`` steps; OmniSafe's ``safety_budget``)."""
    spread = 1.0 if discount == 1.0 else (1.0 - discount**horizon) / ((1.0 - discount) * horizon)
    return bound * spread


class SimmerBudget(SauteBudget):
    """:class:`~crax.core.env.SauteBudget` whose budget is given with every step: its
    ``action_size`` is the task's + 1, the last entry the (discounted) budget ``d_t > 0`` that the learner's
    controller holds (its ``env_action`` appends it; the controller's state is the learner's, which the
    env cannot see otherwise). Each episode starts at ``z = 1`` (the whole budget left) and each step
    spends ``z ← (z − c/d_t)/γ_b``; observation and penalty are Saute's. ``safety_bound`` only sizes the
    budget reported before any step (``discounted_bound``)."""

    @property
    def action_size(self) -> int:
        """The task's action entries and the budget."""
        return self.env.action_size + 1

    def step(self, state: State, action: jax.Array) -> State:
        budget = action[..., -1]
        z = state.info["saute_budget"]
        state = self.env.step(state.replace(obs=state.obs[..., :-1]), action[..., :-1])
        z = (z - state.cost / budget) / self.discount
        state = state.replace(reward=jnp.where(z < 0, jnp.asarray(self.penalty, state.reward.dtype), state.reward))
        return self._augment(state, z)

