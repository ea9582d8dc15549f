"""P3O's penalty weight κ as a constraint rule: multiplied by ``kappa_factor`` while the constraint is
violated and divided by it otherwise, within [κ₀, κ_max] (OmniSafe's P3O keeps κ fixed: factor 1)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.core.params import ranged
from crax.learners.rules.rule import ConstraintRule


@dataclasses.dataclass(frozen=True)
class KappaFields:
    """The penalty weight's fields (OmniSafe's P3O.yaml: a fixed κ = 20)."""

    kappa_init: float = ranged(20.0, gt=0)
    """Initial and minimum penalty weight κ₀ (OmniSafe's ``kappa``)."""
    kappa_factor: float = ranged(1.0, ge=1)
    """κ is multiplied by this factor when v > 0 and divided by it otherwise (1: κ stays κ₀, OmniSafe's rule)."""
    kappa_max: float = ranged(20.0, ge="kappa_init")
    """Upper bound κ_max of the penalty weight."""


class KappaRule(ConstraintRule):
    """κ (one per budgeted term, logged as ``multiplier/kappa``), stepped once per iteration; the learner's
    loss reads :meth:`weight` (P3O's exact penalty is not a Lagrangian mix)."""

    Fields: ClassVar[type[KappaFields]] = KappaFields
    config: KappaFields

    def __init__(self, config: KappaFields, cost_shape: tuple[int, ...], episode_length: int):
        super().__init__(config, cost_shape, episode_length)
        self.kappa = self.filled(config.kappa_init)

    def weight(self) -> jax.Array:
        """κ as a constant of the loss."""
        return jax.lax.stop_gradient(self.kappa[...])

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        c = self.config
        k = self.kappa[...]
        self.kappa[...] = jnp.where(violation > 0, jnp.minimum(k * c.kappa_factor, c.kappa_max),
                                    jnp.maximum(k / c.kappa_factor, c.kappa_init))
