"""The constraint rule a learner is composed of: the state that turns the iteration's violation into
the loss's weight on the cost (a multiplier λ, a penalty weight κ, a controlled budget), as OmniSafe
composes its ``Lagrange`` and ``PIDLagrangian`` into its learners.

A learner class names its rule (``Rule = LagrangianRule``); the learner builds it as ``self.rule`` and
calls :meth:`ConstraintRule.update` once per training iteration with the per-step violation
v = ĉ − d/T and the bound d. Every family uses the same rule classes, so a rule's variables have the
same names, logs (``multiplier/<name>``) and checkpoint paths (``rule/<name>``) in every family.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core.env import Env


class Multiplier(nnx.Variable):
    """Constraint-controller state (λ, κ, the PID terms, a budget): logged and checkpointed, never trained."""


class ControllerState(Multiplier):
    """Constraint-controller internals that are not of the cost signal's shape (an optimizer's step
    count, a PID's delayed history): checkpointed with the multipliers, never trained, not logged."""


def logged_values(module: nnx.Module) -> dict[str, jax.Array]:
    """A module's logged state: its :class:`Multiplier` variables that are not :class:`ControllerState`, by name."""
    return {k: v[...] for k, v in vars(module).items()
            if isinstance(v, Multiplier) and not isinstance(v, ControllerState)}


def weighted_cost(weights: jax.Array, cost: jax.Array, like: jax.Array) -> jax.Array:
    """Σ_k w_k c_k per sample: ``cost`` has ``like``'s shape (one cost) or ``like.shape + (K,)``."""
    return jnp.sum(jnp.reshape(weights, (-1,)) * cost.reshape(like.shape + (-1,)), axis=-1)


def lagrangian_advantage(reward: jax.Array, cost: jax.Array, lam: jax.Array) -> jax.Array:
    """(r − Σ λ_k c_k) / (1 + Σ λ_k): the Lagrangian mix of a reward and a cost quantity (advantages in
    the PPO family, Q-values in the off-policy one; one term: λ scalar)."""
    return (reward - weighted_cost(lam, cost, reward)) / (1.0 + jnp.sum(lam))


class ConstraintRule(nnx.Module):
    """A learner's constraint rule: its state (:class:`Multiplier` variables), its once-per-iteration
    :meth:`update`, and how the loss mixes a reward and a cost quantity (:meth:`mix`; the base leaves
    the reward alone). ``config`` is the learner's, which lists the rule's field group among its bases.

    A rule may also transform the env (:meth:`wrap_env`, a class method, as the learner's hook is) and
    the env's action (:meth:`act`)."""

    Fields: ClassVar[type[Any]] = object
    """The field group the learner's config must have (checked when the learner is built)."""
    constraint_kinds: ClassVar[tuple[str, ...]] = ("expected",)
    """The ``constraint_kind`` values whose violation signal the rule can steer by (a rule that only
    reads the violation's sign and size, as a penalty weight's, takes every kind)."""

    def __init__(self, config: Any, cost_shape: tuple[int, ...], episode_length: int):
        if not isinstance(config, self.Fields):
            raise TypeError(f"{type(self).__name__} reads {self.Fields.__name__}'s fields; the learner's config "
                            f"{type(config).__name__} does not list it among its bases")
        self.config = config
        self.cost_shape = cost_shape
        self.episode_length = int(episode_length)

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        """Steps the rule's state from the per-step violation v (shape :attr:`cost_shape`) and the bound d."""

    def mix(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        """The quantity the actor maximizes from a reward and a cost quantity. Default: the reward."""
        return reward

    def values(self) -> dict[str, jax.Array]:
        """The logged state (:class:`Multiplier` variables that are not :class:`ControllerState`) by name."""
        return logged_values(self)

    @classmethod
    def wrap_env(cls, env: Env, config: Any) -> Env:
        """The env the learner trains on (after the learner's own wrapper). Default: unchanged."""
        return env

    def act(self, action: jax.Array) -> jax.Array:
        """The env's action from the learner's squashed action. Default: unchanged."""
        return action

    def hold(self, state: Any, names: dict[str, str], logged: tuple[str, ...] = ()) -> None:
        """Keeps the fields of a state record (a dataclass or named tuple) as variables: field ``f`` under the
        attribute ``names[f]``, a :class:`Multiplier` for the fields in ``logged``, :class:`ControllerState` otherwise."""
        for field, attr in names.items():
            setattr(self, attr, (Multiplier if field in logged else ControllerState)(getattr(state, field)))

    def held(self, record: type, names: dict[str, str]) -> Any:
        """The state record of type ``record`` from the variables :meth:`hold` made."""
        return record(**{field: getattr(self, attr)[...] for field, attr in names.items()})

    def store(self, state: Any, names: dict[str, str]) -> None:
        """Writes a state record back into the variables :meth:`hold` made."""
        for field, attr in names.items():
            getattr(self, attr)[...] = getattr(state, field)

    def filled(self, value: float | jax.Array) -> Multiplier:
        """A multiplier of the cost signal's shape (one entry per budgeted term), filled with ``value``."""
        return Multiplier(jnp.full(self.cost_shape, value, jnp.float32))


class PenaltyRule(ConstraintRule):
    """A rule whose state is a penalty weight λ on the cost (:attr:`lagrange`), mixed as
    (r − Σ λ_k c_k)/(1 + Σ λ_k) with λ a constant of the loss."""

    lagrange: Multiplier

    def weight(self) -> jax.Array:
        """λ as a constant of the loss."""
        return jax.lax.stop_gradient(self.lagrange[...])

    def mix(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        return lagrangian_advantage(reward, cost, self.weight())
