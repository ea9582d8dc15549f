"""DDPG: deep deterministic policy gradient, the off-policy family's deterministic learner (TD3 derives from it)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core import observation
from crax.core.params import ranged
from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLearner
from crax.learners.off_policy.losses import objective_loss
from crax.learners.shared.networks import MLP, Activation


@dataclasses.dataclass(frozen=True)
class DDPGFields:
    """DDPG's own fields. The exploration noise acts on the pre-squash action u (the env receives tanh(u))."""

    exploration_noise: float = ranged(0.1, gt=0)
    """Standard deviation of the Gaussian added to the actor's u while training (and of the
    "stochastic" evaluated policy); 0.1 is OmniSafe's DDPG ``exploration_noise``."""


class DeterministicActor(nnx.Module):
    """An MLP from ``inputs`` features (the normalized observation, or the shared encoder's features of a
    structured one) to the pre-squash action u."""

    def __init__(self, inputs: int, action_size: int, hidden: tuple[int, ...], *, rngs: nnx.Rngs,
                 activation: Activation = "swish"):
        self.net = MLP(inputs, hidden, action_size, rngs=rngs, activation=activation)

    def __call__(self, x: Any) -> jax.Array:
        return self.net(x)


@dataclasses.dataclass(frozen=True)
class DDPGConfig(DDPGFields, OffPolicyConfig):
    """DDPG's hyperparameters: the off-policy family's fields and DDPG's own (:class:`DDPGFields`)."""


class DDPG(OffPolicyLearner, name="ddpg", config=DDPGConfig):
    """DDPG (Lillicrap et al. 2016, in OmniSafe's form): one reward Q-network; the actor maximizes
    objective(Q_r, Q_c) at a = tanh(μ(s)) every update; both critics' targets bootstrap at the online
    actor's a' = tanh(μ(s')) (OmniSafe's DDPG keeps no target actor in its targets). Exploration adds
    Gaussian noise of ``exploration_noise`` to u. Unconstrained; ``ddpg-lag`` and ``ddpg-pid`` add the
    multiplier rules."""

    config: DDPGFields  # type: ignore[assignment]  # with the OffPolicyConfig fields
    reward_critics: ClassVar[int] = 1

    def build_actor(self, inputs: int, action_size: int, rngs: nnx.Rngs) -> None:
        c = self.config
        assert isinstance(c, OffPolicyConfig)
        self.actor = DeterministicActor(inputs, action_size, tuple(c.actor_hidden), rngs=rngs, activation=c.activation)

    def policy(self, obs: Any) -> tuple[jax.Array, jax.Array]:
        loc = self.actor(self.actor_input(obs))
        return loc, jnp.full_like(loc, self.config.exploration_noise)

    def deterministic_action(self, x: jax.Array) -> jax.Array:
        return jnp.tanh(self.actor(self.actor_features(x)))

    def target_action(self, x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self.deterministic_action(x), jnp.zeros(observation.lead_shape(x))

    def actor_loss(self, actor, x, key):
        q_r, q_c = self.critics(x, jnp.tanh(actor(self.actor_features(x))))
        loss = objective_loss(self.objective(q_r[0], q_c if self.cost_terms else q_c[..., 0]))
        return loss, {"loss/actor": loss}
