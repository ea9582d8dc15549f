"""SAC: the soft actor-critic of the off-policy family, with its temperature tuned to a target entropy."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core.params import ranged
from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLearner, standard_normal, value_and_grad
from crax.learners.off_policy.losses import objective_loss, soft_value, squash, temperature_loss
from crax.learners.shared.networks import TanhGaussianActor


@dataclasses.dataclass(frozen=True)
class SACFields:
    """SAC's own fields."""

    init_alpha: float = ranged(0.1, gt=0)
    """Initial temperature α of the entropy term (0.1 by measurement: docs/learners.md; docs/DECISIONS.md, decision 66)."""
    target_entropy: float | None = ranged(None, optional=True)
    """Entropy the temperature is tuned towards; None: −(action size), Haarnoja et al.'s choice."""
    auto_alpha: bool = True
    """Tune α towards ``target_entropy`` after every actor step; False keeps α at ``init_alpha``
    (OmniSafe's SAC yamls: ``auto_alpha: False``, α 0.2)."""


class Temperature(nnx.Module):
    """log α, trained to keep the policy's entropy at the target."""

    def __init__(self, init_alpha: float):
        self.log_alpha = nnx.Param(jnp.log(jnp.asarray(init_alpha, jnp.float32)))

    def __call__(self) -> jax.Array:
        return jnp.exp(self.log_alpha[...])


def squashed_sample(actor: Callable[[jax.Array], tuple[jax.Array, jax.Array]], x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A reparameterized action ``tanh(u)``, u ~ N(loc, scale), and its log-density
    (:func:`~crax.learners.off_policy.losses.squash`)."""
    loc, scale = actor(x)
    return squash(loc, scale, standard_normal(key, loc.shape))


@dataclasses.dataclass(frozen=True)
class SACConfig(SACFields, OffPolicyConfig):
    """SAC's hyperparameters: the off-policy family's fields and SAC's own (:class:`SACFields`)."""


class SAC(OffPolicyLearner, name="sac", config=SACConfig):
    """Soft actor-critic (Haarnoja et al. 2018, automatic temperature): the actor minimizes
    −objective(min Q_r − α log π(a|s), Q_c) at a ~ π(s) (with a multiplier: (α log π − min Q_r + λ Q_c)/(1 + λ),
    OmniSafe's SACLag); the reward target adds −α log π(a'|s'), the cost target bootstraps at tanh of the
    actor's mean; α follows ∇ −log α · (log π + target entropy). Unconstrained; ``sac-lag`` and ``sac-pid``
    add the multiplier rules."""

    optimized: ClassVar[tuple[str, ...]] = ("actor", "critics", "temperature")
    config: SACFields  # type: ignore[assignment]  # with the OffPolicyConfig fields

    def build_actor(self, inputs: int, action_size: int, rngs: nnx.Rngs) -> None:
        c = self.config
        assert isinstance(c, OffPolicyConfig)
        self.actor = TanhGaussianActor(inputs, action_size, tuple(c.actor_hidden), rngs=rngs, activation=c.activation)
        self.temperature = Temperature(self.config.init_alpha)

    @property
    def entropy_target(self) -> float:
        target = self.config.target_entropy
        return -float(self.action_size) if target is None else float(target)

    def alpha(self) -> jax.Array:
        return jax.lax.stop_gradient(self.temperature())

    def target_action(self, x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        return squashed_sample(self.actor, self.actor_features(x), key)

    def deterministic_action(self, x: jax.Array) -> jax.Array:
        return jnp.tanh(self.actor(self.actor_features(x))[0])

    def entropy_bonus(self, logp: jax.Array) -> jax.Array:
        return -self.alpha() * logp

    def cost_value(self, x: jax.Array, action: jax.Array) -> jax.Array:
        """The cost quantity the actor's objective weighs at normalized observations and sampled actions
        ``(B, outputs)``: the cost critic's Q_c (WCSAC: the CVaR of its Gaussian cost return)."""
        return self.critics.cost(x, action)

    def actor_loss(self, actor, x, key):
        action, logp = squashed_sample(actor, self.actor_features(x), key)
        q_r, q_c = self.critics.reward(x, action), self.cost_value(x, action)
        # the entropy term is on the reward's side of the mix, so a multiplier divides it by 1 + λ too
        soft_q = soft_value(q_r, self.alpha(), logp)
        loss = objective_loss(self.objective(soft_q, q_c if self.cost_terms else q_c[..., 0]))
        return loss, {"loss/actor": loss, "policy/entropy": -logp.mean()}

    def extra_update(self, optimizers, x, key):
        if not self.config.auto_alpha:
            return {"alpha": self.temperature()}
        _, logp = squashed_sample(self.actor, self.actor_features(x), key)
        gap = jax.lax.stop_gradient(logp + self.entropy_target)

        def loss(temperature, gap):
            value = temperature_loss(temperature.log_alpha[...], gap)
            return value, {"loss/alpha": value}

        (_, metrics), grads = value_and_grad(loss, self.temperature, gap)
        optimizers["temperature"].update(self.temperature, grads)
        return {**metrics, "alpha": self.temperature()}
