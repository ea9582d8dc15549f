"""IPO's log-barrier penalty as a constraint rule: the weight p = κ/(d − J_c) on the cost, set once per
iteration from the episode's excess and mixed as the Lagrangian rule mixes λ (OmniSafe's ``IPO``)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.rules.rule import PenaltyRule


@dataclasses.dataclass(frozen=True)
class BarrierFields:
    """The barrier's fields (OmniSafe's IPO.yaml)."""

    kappa: float = ranged(0.01, gt=0)
    """Barrier weight κ: the penalty is κ/(d − J_c)."""
    penalty_max: float = ranged(1.0, gt=0)
    """The penalty where κ/(d − J_c) is negative (the bound is passed) or larger than this."""


def barrier_penalty(excess: jax.Array, kappa: float, penalty_max: float) -> jax.Array:
    """OmniSafe's ``IPO._compute_adv_surrogate`` penalty from the episode's excess e = J_c − d:
    p = κ/(−e + 10⁻⁸), replaced by ``penalty_max`` where p < 0 or p > ``penalty_max``."""
    p = kappa / (-excess + 1e-8)
    return jnp.where((p < 0) | (p > penalty_max), penalty_max, p)


class BarrierRule(PenaltyRule):
    """p (one per budgeted term, logged as ``multiplier/ipo_penalty``) = :func:`barrier_penalty` of the
    episode's excess T·v, set once per iteration."""

    Fields: ClassVar[type[BarrierFields]] = BarrierFields
    config: BarrierFields

    def __init__(self, config: BarrierFields, cost_shape: tuple[int, ...], episode_length: int):
        super().__init__(config, cost_shape, episode_length)
        self.ipo_penalty = self.filled(0.0)

    def weight(self) -> jax.Array:
        return jax.lax.stop_gradient(self.ipo_penalty[...])

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        c = self.config
        self.ipo_penalty[...] = barrier_penalty(self.episode_length * violation, c.kappa, c.penalty_max)


