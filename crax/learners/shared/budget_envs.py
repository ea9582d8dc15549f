"""The budget-augmented envs of the Saute and Simmer learners (Sootla et al., 2022, "Saute RL" and
"Effects of Safety State Augmentation on Safe Exploration"): each unbatched env carries the remaining
safety budget in its state and observation. Saute spends a fixed budget; Simmer's is moved between
iterations by a controller (OmniSafe's ``SimmerAdapter``; :mod:`crax.learners.rules.simmer`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from crax.core import observation
from crax.core.env import Env, State, Wrapper


def _with_state(obs: Any, state_vector: jax.Array) -> Any:
    """``obs`` with its state vector replaced (the array itself for a flat observation)."""
    return {**obs, observation.STATE: state_vector} if observation.is_structured(obs) else state_vector


def _without_budget(state: State) -> State:
    """The wrapped env's state: the observation's state vector without the budget entry appended last."""
    return state.replace(obs=_with_state(state.obs, observation.state(state.obs)[..., :-1]))


def discounted_budget(bound: float | jax.Array, discount: float, horizon: int) -> float | jax.Array:
    """``d (1 − γ^T)/((1 − γ) T)``: an episodic cost ``d`` in the units of Saute's and Simmer's budget
    (the discounted cost of spending ``d`` evenly over ``T`` steps; OmniSafe's ``safety_budget``)."""
    spread = 1.0 if discount == 1.0 else (1.0 - discount**horizon) / ((1.0 - discount) * horizon)
    return bound * spread


class SauteBudget(Wrapper):
    """Saute's safety-budget state augmentation (Sootla et al., 2022) for one unbatched env.

    The budget is the discounted equivalent of the episodic bound d over the episode length T
    (docs/SPEC.md section 7, decision 55): ``d_γ = d (1 − γ_b^T) / ((1 − γ_b) T)``, the discounted
    cost of spending d evenly over T steps. The remaining budget is kept normalized, ``z₀ = 1``, and each step
    ``z ← (z − c/d_γ) / γ_b``; the observation (its state vector, where it is a dict with images) gets
    ``clip(z, 0, max_budget)`` appended, and the
    reward is replaced by ``penalty`` on every step where the unclipped ``z`` is negative. The
    true reward and cost stay visible to an inner :class:`EpisodeStats` (wrap it inside this
    wrapper); the unclipped budget is reported in ``metrics["saute/budget"]``.
    """

    def __init__(self, env: Env, safety_bound: float = 25.0, discount: float = 0.99, penalty: float = -1.0,
                 max_budget: float = 3.0):
        super().__init__(env)
        if not safety_bound > 0:
            raise ValueError(f"SauteBudget needs a positive safety_bound, got {safety_bound!r}")
        if not 0.0 < discount <= 1.0:
            raise ValueError(f"SauteBudget discount must lie in (0, 1], got {discount!r}")
        if not max_budget > 0:
            raise ValueError(f"SauteBudget max_budget must be > 0, got {max_budget!r}")
        self.safety_bound = float(safety_bound)
        self.discount = float(discount)
        self.penalty = float(penalty)
        self.max_budget = float(max_budget)
        self.discounted_bound = float(discounted_budget(self.safety_bound, self.discount, env.episode_length))
        """d_γ: the budget in units of discounted cost."""

    def _augment(self, state: State, z: jax.Array) -> State:
        seen = jnp.clip(z, 0.0, self.max_budget)
        vector = observation.state(state.obs)
        obs = _with_state(state.obs, jnp.concatenate([vector, seen[..., None].astype(vector.dtype)], axis=-1))
        return state.replace(
            obs=obs,
            info={**state.info, "saute_budget": z},
            metrics={**state.metrics, "saute/budget": z},
        )

    def reset(self, key: jax.Array) -> State:
        return self._augment(self.env.reset(key), jnp.ones((), jnp.float32))

    def step(self, state: State, action: jax.Array) -> State:
        z = state.info["saute_budget"]
        state = self.env.step(_without_budget(state), action)
        z = (z - state.cost / self.discounted_bound) / self.discount
        state = state.replace(reward=jnp.where(z < 0, jnp.asarray(self.penalty, state.reward.dtype), state.reward))
        return self._augment(state, z)


class SimmerBudget(SauteBudget):
    """:class:`SauteBudget` whose budget is given with every step: its
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
        state = self.env.step(_without_budget(state), action[..., :-1])
        z = (z - state.cost / budget) / self.discount
        state = state.replace(reward=jnp.where(z < 0, jnp.asarray(self.penalty, state.reward.dtype), state.reward))
        return self._augment(state, z)

