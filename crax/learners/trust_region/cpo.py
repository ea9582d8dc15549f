"""CPO (Achiam et al. 2017): the trust-region step that solves the linearized constrained problem."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from crax.core.params import ranged
from crax.learners.on_policy.family import IterationBatch, PPOConfig
from crax.learners.trust_region.family import (
    LinearizedConfig,
    PolicySpace,
    TrustRegionPPO,
    cost_checked_step,
    linearize,
)
from crax.learners.trust_region.steps import cpo_direction


@dataclasses.dataclass(frozen=True)
class CPOConfig(LinearizedConfig):
    """CPO hyperparameters: the trust-region fields (OmniSafe's CPO tries 20 line-search steps)."""

    backtrack_steps: int = ranged(20, ge=1, integer=True)
    """Line-search tries at most; when none is accepted the actor stays as it was."""


class CPO(TrustRegionPPO):
    """Constrained policy optimization: the closed-form step of the linearized problem
    (:func:`~crax.learners.trust_region.steps.cpo_direction`), then a line search on KL ≤ δ, the cost
    surrogate and (in the feasible cases) the reward surrogate."""

    name: ClassVar[str] = "cpo"
    Config: ClassVar[type[PPOConfig]] = CPOConfig
    config: CPOConfig  # the instance of Config that __init__ stores

    def actor_step(self, space: PolicySpace, batch: IterationBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        lin = linearize(self, space, batch)
        direction, stats = cpo_direction(lin.x, lin.p, lin.q, lin.r, lin.s, lin.c, self.config.target_kl,
                                         lin.b @ lin.b)
        step, search = cost_checked_step(self, space, lin, direction, check_reward=stats["cpo/case"] >= 2)
        return step, {**search, **stats}
