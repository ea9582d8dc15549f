"""Simmer's budget controller (OmniSafe's ``SimmerPIDAgent``, ``common/simmer_agent.py``) as a constraint
rule (``ppo-simmer-pid``, ``trpo-simmer-pid``): it keeps the controlled safety budget, steps it once per
iteration on the episode cost, and hands it to :class:`crax.learners.shared.budget_envs.SimmerBudget` with every action."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from crax.core.env import Env
from crax.core.params import ranged
from crax.learners.rules.rule import ConstraintRule, Multiplier
from crax.learners.shared.budget_envs import SimmerBudget, discounted_budget
from crax.learners.shared.config import positive_safety_bound

HISTORY = 10
"""Blurred errors the integral term sums (OmniSafe's ``_integral_history``, a deque of length 10)."""


@dataclasses.dataclass(frozen=True)
class SimmerFields:
    """The Simmer learners' fields (defaults: OmniSafe's PPOSimmerPID.yaml and TRPOSimmerPID.yaml): Saute's
    budget state, and the PID controller that moves the budget, in OmniSafe's units (an episodic cost
    d as :func:`~crax.learners.shared.budget_envs.discounted_budget` of it). The controlled budget starts at
    ``safety_bound`` (OmniSafe's ``safety_budget``)."""

    safety_bound: float = positive_safety_bound()
    """Episodic cost budget d: the controlled budget's start and the bound the cost is judged by."""
    saute_discount: float = ranged(0.999, gt=0, le=1)
    """Budget discount γ_b (OmniSafe's ``saute_gamma``)."""
    saute_penalty: float = ranged(-1.0, le=0)
    """Reward that replaces the task reward while the remaining budget is negative (``unsafe_reward``)."""
    saute_max_budget: float = ranged(3.0, gt=0)
    """z_max: the observed budget is clip(z, 0, z_max) (crax's Saute: docs/DECISIONS.md, decision 27)."""
    simmer_upper_budget: float | None = ranged(None, gt=0, optional=True)
    """The most the controlled budget may reach, episodic (OmniSafe's ``upper_budget``); None: ``safety_bound``."""
    simmer_kp: float = ranged(5e-4, ge=0)
    """Proportional gain on the blurred error (``control_cfgs.kp``)."""
    simmer_ki: float = ranged(1e-5, ge=0)
    """Integral gain on the sum of the last 10 blurred errors (``control_cfgs.ki``)."""
    simmer_kd: float = ranged(0.0, ge=0)
    """Gain on the last step's clipped-away part, previous action − previous raw action (``control_cfgs.kd``)."""
    simmer_polyak: float = ranged(0.995, ge=0, le=1)
    """Blur of the error: e ← polyak·e_prev + (1 − polyak)·(budget − episode cost) (``control_cfgs.polyak``)."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class SimmerState:
    """The controller's state: the budget, the last blurred error, the last ``HISTORY`` blurred errors by
    update number modulo ``HISTORY`` (0 before written), the last action and raw action, updates taken."""

    budget: jax.Array
    error: jax.Array
    errors: jax.Array
    action: jax.Array
    raw_action: jax.Array
    updates: jax.Array


def simmer_init(budget: float | jax.Array) -> SimmerState:
    """The state before the first update: the budget, everything else zero."""
    zero = jnp.zeros((), jnp.float32)
    return SimmerState(budget=jnp.asarray(budget, jnp.float32), error=zero, errors=jnp.zeros((HISTORY,), jnp.float32),
                       action=zero, raw_action=zero, updates=jnp.zeros((), jnp.int32))


def simmer_step(state: SimmerState, episode_cost: jax.Array, upper: jax.Array, gains: SimmerFields) -> SimmerState:
    """OmniSafe's ``SimmerPIDAgent.get_greedy_action(budget, episode_cost)``, both in budget units:
    e ← polyak·e + (1 − polyak)(budget − cost); raw = K_p e + K_i Σ(last 10 e) + K_d (action − raw action);
    budget ← clip(budget + clip(raw, −1, 1), 10⁻⁶, upper); action ← the budget's change."""
    error = gains.simmer_polyak * state.error + (1.0 - gains.simmer_polyak) * (state.budget - episode_cost)
    errors = state.errors.at[state.updates % HISTORY].set(error)
    raw = gains.simmer_kp * error + gains.simmer_ki * jnp.sum(errors) + gains.simmer_kd * (state.action - state.raw_action)
    budget = jnp.clip(state.budget + jnp.clip(raw, -1.0, 1.0), 1e-6, upper)
    return SimmerState(budget=budget, error=error, errors=errors, action=budget - state.budget, raw_action=raw,
                       updates=state.updates + 1)


class SimmerRule(ConstraintRule):
    """Simmer: ``wrap_env`` is :class:`~crax.learners.shared.budget_envs.SimmerBudget`; the budget (logged as
    ``multiplier/simmer_budget``, in budget units) steps once per iteration by :func:`simmer_step` on the
    episode cost J = T·v + d, before the update (OmniSafe's ``control_budget`` in ``_update``); :meth:`act`
    appends it to every action."""

    Fields: ClassVar[type[SimmerFields]] = SimmerFields
    config: SimmerFields
    simmer_budget: Multiplier
    STATE: ClassVar[dict[str, str]] = {field: f"simmer_{field}" for field in
                                       ("budget", "error", "errors", "action", "raw_action", "updates")}
    """:class:`SimmerState`'s fields -> the variables they are kept under (the names logs and checkpoints use)."""

    def __init__(self, config: SimmerFields, cost_shape: tuple[int, ...], episode_length: int):
        super().__init__(config, cost_shape, episode_length)
        self.hold(simmer_init(self.in_budget_units(config.safety_bound)), self.STATE, logged=("budget",))

    @classmethod
    def wrap_env(cls, env: Env, config: Any) -> Env:
        return SimmerBudget(env, safety_bound=config.safety_bound, discount=config.saute_discount,
                            penalty=config.saute_penalty, max_budget=config.saute_max_budget)

    def in_budget_units(self, episode_cost: float | jax.Array) -> jax.Array:
        """An episodic cost as :func:`~crax.learners.shared.budget_envs.discounted_budget` of it, over this learner's episodes."""
        return jnp.asarray(discounted_budget(episode_cost, self.config.saute_discount, self.episode_length),
                           jnp.float32)

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        c = self.config
        upper = c.safety_bound if c.simmer_upper_budget is None else c.simmer_upper_budget
        episode_cost = self.episode_length * violation + bound
        state = simmer_step(self.held(SimmerState, self.STATE), self.in_budget_units(episode_cost),
                            self.in_budget_units(upper), c)
        self.store(state, self.STATE)

    def act(self, action: jax.Array) -> jax.Array:
        budget = jnp.broadcast_to(self.simmer_budget[...], action.shape[:-1] + (1,)).astype(action.dtype)
        return jnp.concatenate([action, budget], axis=-1)
