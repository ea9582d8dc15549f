"""IPO: interior-point policy optimization, PPO with a log-barrier penalty on the episode cost (OmniSafe's ``IPO``)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.base import ConstrainedPPO, PPOConfig
from crax.learners.multipliers import lagrangian_advantage
from crax.learners.omnisafe_defaults import OmniSafePPOConfig


@dataclasses.dataclass(frozen=True)
class IPOConfig(OmniSafePPOConfig):
    """IPO hyperparameters: OmniSafe's PPO-family defaults plus the barrier's (IPO.yaml)."""

    kappa: float = ranged(0.01, gt=0)
    """Barrier weight κ: the penalty is κ/(d − J_c)."""
    penalty_max: float = ranged(1.0, gt=0)
    """The penalty where κ/(d − J_c) is negative (the bound is passed) or larger than this."""


def barrier_penalty(excess: jax.Array, kappa: float, penalty_max: float) -> jax.Array:
    """OmniSafe's ``IPO._compute_adv_surrogate`` penalty from the episode's excess e = J_c − d:
    p = κ/(−e + 10⁻⁸), replaced by ``penalty_max`` where p < 0 or p > ``penalty_max``."""
    p = kappa / (-excess + 1e-8)
    return jnp.where((p < 0) | (p > penalty_max), penalty_max, p)


class IPO(ConstrainedPPO):
    """Clip surrogate on (Â_r − p Â_c)/(1 + p) with the barrier's gradient weight p = κ/(d − J_c) (one per
    budgeted term), J_c = T·v + d; p is set once per iteration and logged as ``multiplier/ipo_penalty``."""

    name: ClassVar[str] = "ipo"
    Config: ClassVar[type[PPOConfig]] = IPOConfig
    config: IPOConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True

    def init_multipliers(self) -> None:
        self.ipo_penalty = self.multiplier_init(0.0)

    def multiplier_update(self, violation: jax.Array) -> None:
        c = self.config
        self.ipo_penalty[...] = barrier_penalty(self.episode_length * violation, c.kappa, c.penalty_max)

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        return lagrangian_advantage(adv_r, adv_c, self.penalty(self.ipo_penalty))
