"""TD3: twin delayed deep deterministic policy gradient, the off-policy family's deterministic learner."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core.params import ranged
from crax.learners.networks import MLP
from crax.learners.off_policy import OffPolicyConfig, OffPolicyLearner


@dataclasses.dataclass(frozen=True)
class TD3Fields:
    """TD3's own fields. The noises act on the pre-squash action u (the env receives tanh(u))."""

    exploration_noise: float = ranged(0.2, gt=0)
    """Standard deviation of the Gaussian added to the actor's u while training (and of the
    "stochastic" evaluated policy)."""
    target_noise: float = ranged(0.2, ge=0)
    """Standard deviation of the target policy's smoothing noise."""
    noise_clip: float = ranged(0.5, ge=0)
    """The smoothing noise is clipped to ±noise_clip."""
    policy_delay: int = ranged(2, ge=1, integer=True)
    """The actor and the targets update once every this many critic updates."""


class DeterministicActor(nnx.Module):
    """An MLP from the normalized observation to the pre-squash action u."""

    def __init__(self, observation_size: int, action_size: int, hidden: tuple[int, ...], *, rngs: nnx.Rngs):
        self.net = MLP(observation_size, hidden, action_size, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.net(x)


@dataclasses.dataclass(frozen=True)
class TD3Config(TD3Fields, OffPolicyConfig):
    """TD3's hyperparameters: the off-policy family's fields and TD3's own (:class:`TD3Fields`)."""


class TD3(OffPolicyLearner):
    """TD3 (Fujimoto et al. 2018): the actor maximizes objective(Q_r1, Q_c) at a = tanh(μ(s)); the
    targets take the target actor's action with clipped Gaussian smoothing noise and the smaller
    reward twin; the actor and all targets update every ``policy_delay`` critic steps. Exploration
    adds Gaussian noise of ``exploration_noise`` to u. Unconstrained; ``td3-lag`` and ``td3-pid`` add
    the multiplier rules."""

    name: ClassVar[str] = "td3"
    Config: ClassVar[type[OffPolicyConfig]] = TD3Config
    config: TD3Fields  # type: ignore[assignment]  # with the OffPolicyConfig fields

    def build_actor(self, observation_size: int, action_size: int, rngs: nnx.Rngs) -> None:
        c = self.config
        assert isinstance(c, OffPolicyConfig)
        self.actor = DeterministicActor(observation_size, action_size, tuple(c.actor_hidden), rngs=rngs)
        self.target_actor = nnx.clone(self.actor)

    def policy(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        loc = self.actor(self.normalize(obs))
        return loc, jnp.full_like(loc, self.config.exploration_noise)

    def target_action(self, x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        c = self.config
        u = self.target_actor(x)
        noise = jnp.clip(c.target_noise * jax.random.normal(key, u.shape), -c.noise_clip, c.noise_clip)
        return jnp.tanh(u + noise), jnp.zeros(u.shape[:-1])

    def actor_loss(self, actor, x, key):
        q_r, q_c = self.critics(x, jnp.tanh(actor(x)))
        loss = -jnp.mean(self.objective(q_r[0], q_c if self.cost_terms else q_c[..., 0]))
        return loss, {"loss/actor": loss}

    def actor_due(self, step: jax.Array) -> jax.Array:
        return step % self.config.policy_delay == 0

    def target_pairs(self) -> list[tuple[nnx.Module, nnx.Module]]:
        return [*super().target_pairs(), (self.target_actor, self.actor)]
