"""WCSAC: SAC-Lag whose actor weighs the CVaR of a Gaussian cost return, not its mean (Yang et al. 2021,
"WCSAC: Worst-Case Soft Actor Critic for Safety-Constrained Reinforcement Learning", AAAI).

The safety critic is the family's cost Q-network Q_c(s, a), the mean of the cost return, and a variance
network V_c(s, a) ≥ 0 (:class:`CostVariance`, with its target copy and its own Adam at the critics'
rate) trained on the Bellman equation of the second moment
(:func:`~crax.learners.off_policy.losses.variance_target`,
:func:`~crax.learners.off_policy.losses.variance_loss`). Read as N(Q_c, V_c), the cost return's CVaR at
risk level α is Γ = Q_c + α⁻¹ φ(Φ⁻¹(α)) √V_c (:func:`~crax.learners.off_policy.losses.gaussian_cvar`),
and the actor maximizes (min Q_r − α_T log π − λ Γ)/(1 + λ), λ by the shared Lagrangian rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
from flax import nnx

from crax.core.params import ranged
from crax.learners.off_policy.family import Critics, OffPolicyConfig, OffPolicyLagrangianFields, value_and_grad
from crax.learners.off_policy.losses import gaussian_cvar, nonnegative_variance, variance_loss, variance_target
from crax.learners.off_policy.sac import SAC, SACFields
from crax.learners.off_policy.sac_lag import SACLag
from crax.learners.shared.networks import MLP, Activation

__all__ = ["WCSAC", "CostVariance", "WCSACConfig", "WCSACFields"]

VARIANCE_STREAM = 1
"""What the update's key is folded with for the variance target's sample a' ~ π (the family's update
splits the key it is given, unchanged)."""


@dataclasses.dataclass(frozen=True)
class WCSACFields:
    """WCSAC's own field."""

    risk_level: float = ranged(0.1, gt=0, le=1)
    """α of the actor's safety measure Γ = CVaR_α of the cost return: the worst α fraction of it is
    weighed (1: its mean, as ``sac-lag``; smaller: more averse). 0.1, the worst tenth, as
    ``cvar_alpha`` and evaluation's ``cost_cvar``; the paper runs 0.1 to 0.9, its authors' script 0.5."""


@dataclasses.dataclass(frozen=True)
class WCSACConfig(WCSACFields, OffPolicyLagrangianFields, SACFields, OffPolicyConfig):
    """WCSAC's hyperparameters: the off-policy family's, SAC's, the Lagrangian rule's and the risk level."""


class CostVariance(nnx.Module):
    """V_c(s, a) ≥ 0, the variance of the cost return: an MLP on ``inputs`` features and the action, one
    output per budgeted term (as the cost Q-network), through
    :func:`~crax.learners.off_policy.losses.nonnegative_variance`. It reads the normalized observation, or
    on a structured one the critics' encoder's features under ``stop_gradient`` (:meth:`WCSAC.variance_input`)."""

    def __init__(self, inputs: int, action_size: int, hidden: tuple[int, ...], outputs: int, *,
                 rngs: nnx.Rngs, activation: Activation = "swish"):
        self.net = MLP(inputs + action_size, hidden, outputs, rngs=rngs, activation=activation)

    def __call__(self, x: Any, action: jax.Array) -> jax.Array:
        """The variances ``(B, outputs)``."""
        return nonnegative_variance(self.net(x, action))


class WCSAC(SACLag, name="wcsac", config=WCSACConfig, budgets=True):
    """Worst-Case SAC: SAC-Lag with a Gaussian safety critic. The actor maximizes
    (min Q_r − α_T log π − λ Γ)/(1 + λ), Γ = Q_c + α⁻¹ φ(Φ⁻¹(α)) √V_c the CVaR at ``risk_level`` α of the
    cost return (per budgeted term: Σ λ_k Γ_k); λ ← max(0, λ + η_λ v) once per iteration (the rule
    ``sac-lag`` uses). Each gradient step first fits V_c to c² + 2d·c·Q'_c + d²·V'_c + d²·Q'_c² − Q_c(s, a)²
    (target networks at s', a' ~ π) by the 2-Wasserstein loss, then takes SAC-Lag's step, whose cost
    target bootstraps at the reward target's sample a' ~ π as the paper's (not at tanh of the actor's mean:
    :meth:`cost_action`), so that Q_c is the mean the variance is taken about."""

    config: WCSACConfig  # type: ignore[assignment]
    optimized: ClassVar[tuple[str, ...]] = (*SAC.optimized, "variance")
    critic_parts: ClassVar[tuple[str, ...]] = ("critics", "variance")
    variance: CostVariance
    target_variance: CostVariance

    def __init__(self, config: OffPolicyConfig, observation_spec: Any, action_size: int, episode_length: int, *,
                 rngs: nnx.Rngs):
        super().__init__(config, observation_spec, action_size, episode_length, rngs=rngs)
        self.variance = CostVariance(self.network_inputs(observation_spec), action_size, tuple(config.critic_hidden),
                                     max(1, len(self.cost_terms)), rngs=rngs, activation=config.activation)
        self.target_variance = nnx.clone(self.variance)

    def cost_action(self, x_next: jax.Array, a_next: jax.Array) -> jax.Array:
        return a_next

    def cost_value(self, x: jax.Array, action: jax.Array) -> jax.Array:
        return gaussian_cvar(self.critics.cost(x, action), self.variance(self.variance_input(x), action),
                             self.config.risk_level)

    def variance_input(self, x: Any, critics: Critics | None = None) -> Any:
        """What the variance network reads at normalized observations: the features of ``critics``'
        encoder (default: the online critics'; the target variance reads the target critics') under
        ``stop_gradient``, or ``x`` on a flat observation."""
        return jax.lax.stop_gradient((critics or self.critics).features(x))

    def variance_targets(self, batch: dict[str, jax.Array], key: jax.Array) -> jax.Array:
        """The variance critic's regression targets ``(B, outputs)``
        (:func:`~crax.learners.off_policy.losses.variance_target`): the target cost critic and variance
        network at s' and a sample a' ~ π of the policy, the online cost critic at the batch's (s, a)."""
        x_next = self.normalize(batch["next_obs"])
        a_next, _ = self.target_action(x_next, key)
        q_c = self.critics.cost(self.normalize(batch["obs"]), batch["action"])
        y_v = variance_target(batch["cost"], batch["discount"], self.target_critics.cost(x_next, a_next),
                              self.target_variance(self.variance_input(x_next, self.target_critics), a_next), q_c)
        return jax.lax.stop_gradient(y_v)

    def update(self, optimizers: nnx.Dict, batch: dict[str, jax.Array], key: jax.Array,
               step: jax.Array) -> dict[str, jax.Array]:
        """The variance critic's step on the batch (its target from the networks as this step found them),
        then SAC-Lag's (critics, actor, temperature, and every target's soft update)."""
        y_v = self.variance_targets(batch, jax.random.fold_in(key, VARIANCE_STREAM))

        def loss(variance: CostVariance, x: jax.Array, action: jax.Array, y_v: jax.Array):
            v_c = variance(x, action)
            value = variance_loss(v_c, y_v)
            return value, {"loss/critic_cost_variance": value, "q/cost_variance": v_c.mean()}

        x = self.variance_input(self.normalize(batch["obs"]))
        (_, metrics), grads = value_and_grad(loss, self.variance, x, batch["action"], y_v)
        optimizers["variance"].update(self.variance, grads)
        return {**super().update(optimizers, batch, key, step), **metrics}

    def target_pairs(self) -> list[tuple[nnx.Module, nnx.Module]]:
        return [*super().target_pairs(), (self.target_variance, self.variance)]
