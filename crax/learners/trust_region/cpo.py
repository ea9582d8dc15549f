"""CPO (Achiam et al. 2017): the trust-region step that solves the linearized constrained problem."""

from __future__ import annotations

import dataclasses

import jax

from crax.core.params import ranged
from crax.learners.trust_region.family import Linearized, LinearizedConfig, LinearizedPPO
from crax.learners.trust_region.steps import cpo_direction


@dataclasses.dataclass(frozen=True)
class CPOConfig(LinearizedConfig):
    """CPO hyperparameters: the trust-region fields (OmniSafe's CPO tries 20 line-search steps)."""

    backtrack_steps: int = ranged(20, ge=1, integer=True)
    """Line-search tries at most; when none is accepted the actor stays as it was."""


class CPO(LinearizedPPO, name="cpo", config=CPOConfig):
    """Constrained policy optimization: the closed-form step of the linearized problem
    (:func:`~crax.learners.trust_region.steps.cpo_direction`), then a line search on KL ≤ δ, the cost
    surrogate and (in the feasible cases) the reward surrogate."""

    def direction(self, lin: Linearized) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        direction, stats = cpo_direction(lin.x, lin.p, lin.q, lin.r, lin.s, lin.c, self.config.target_kl,
                                         lin.b @ lin.b)
        return direction, stats["cpo/case"] >= 2, stats
