"""TD3: twin delayed deep deterministic policy gradient, DDPG with twin critics, target smoothing and delay."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core.params import ranged
from crax.learners.off_policy.ddpg import DDPG, DDPGFields, DeterministicActor
from crax.learners.off_policy.family import OffPolicyConfig, standard_normal
from crax.learners.off_policy.losses import smoothed_action

__all__ = ["TD3", "DeterministicActor", "TD3Config", "TD3Fields"]


@dataclasses.dataclass(frozen=True)
class TD3Fields(DDPGFields):
    """TD3's own fields. The exploration noise acts on the pre-squash action u; the smoothing noise on
    the target action tanh(μ'(s')), clipped back to [-1, 1] (Fujimoto et al.'s and OmniSafe's form)."""

    exploration_noise: float = ranged(0.2, gt=0)
    """Standard deviation of the Gaussian added to the actor's u while training (and of the
    "stochastic" evaluated policy)."""
    target_noise: float = ranged(0.2, ge=0)
    """Standard deviation of the target policy's smoothing noise (OmniSafe's ``policy_noise``)."""
    noise_clip: float = ranged(0.5, ge=0)
    """The smoothing noise is clipped to ±noise_clip (OmniSafe's ``policy_noise_clip``)."""
    policy_delay: int = ranged(2, ge=1, integer=True)
    """The actor and the targets update once every this many critic updates."""


@dataclasses.dataclass(frozen=True)
class TD3Config(TD3Fields, OffPolicyConfig):
    """TD3's hyperparameters: the off-policy family's fields and TD3's own (:class:`TD3Fields`)."""


class TD3(DDPG, name="td3", config=TD3Config):
    """TD3 (Fujimoto et al. 2018): DDPG with twin reward critics whose smaller value the reward target
    takes, at the target actor's action with clipped Gaussian smoothing noise, clip(tanh(μ'(s')) + ε,
    −1, 1); the actor (objective(Q_r1, Q_c) at tanh(μ(s))) and all targets update every
    ``policy_delay`` critic steps. The cost target bootstraps at the online actor's tanh(μ(s'))
    (OmniSafe's). Unconstrained; ``td3-lag`` and ``td3-pid`` add the multiplier rules."""

    config: TD3Fields  # type: ignore[assignment]  # with the OffPolicyConfig fields
    reward_critics: ClassVar[int] = 2

    def build_actor(self, inputs: int, action_size: int, rngs: nnx.Rngs) -> None:
        super().build_actor(inputs, action_size, rngs)
        self.target_actor = nnx.clone(self.actor)

    def target_action(self, x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        c = self.config
        action = jnp.tanh(self.target_actor(self.actor_features(x)))
        noise = standard_normal(key, action.shape)
        return smoothed_action(action, noise, c.target_noise, c.noise_clip), jnp.zeros(action.shape[:-1])

    def actor_due(self, step: jax.Array) -> jax.Array:
        return step % self.config.policy_delay == 0

    def target_pairs(self) -> list[tuple[nnx.Module, nnx.Module]]:
        return [*super().target_pairs(), (self.target_actor, self.actor)]
