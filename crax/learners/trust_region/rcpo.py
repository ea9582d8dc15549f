"""RCPO: reward-constrained policy optimization, the Lagrangian natural policy gradient (OmniSafe's ``RCPO``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp

from crax.learners.on_policy.omnisafe_defaults import OmniSafeLagrangeFields
from crax.learners.rules import LagrangianRule
from crax.learners.trust_region.family import PolicySpace, TrustRegionConfig, TrustRegionPPO


@dataclasses.dataclass(frozen=True)
class RCPOConfig(OmniSafeLagrangeFields, TrustRegionConfig):
    """RCPO hyperparameters: the trust-region fields (RCPO.yaml: δ 0.01, CG 15 iterations, damping 0.1;
    the line search's are unused) and OmniSafe's Lagrange rule (Adam on λ, lr 0.035, λ₀ 0.001)."""


class RCPO(TrustRegionPPO, name="rcpo", config=RCPOConfig, rule=LagrangianRule, budgets=True):
    """Natural policy gradient on (Â_r − λ Â_c)/(1 + λ): the step sqrt(2δ/xᵀHx)·x, x ≈ H⁻¹g, taken
    whole, with no line search (OmniSafe's ``NaturalPG._update_actor``); λ stepped before it."""

    config: RCPOConfig  # type: ignore[assignment]  # the instance of Config that __init__ stores

    def searched_step(self, space: PolicySpace, direction: jax.Array, accept: Callable[[jax.Array], jax.Array],
                      objective: Callable[[jax.Array], jax.Array]) -> tuple[jax.Array, dict[str, jax.Array]]:
        return super().searched_step(space, direction, lambda fraction: jnp.asarray(True), objective)
