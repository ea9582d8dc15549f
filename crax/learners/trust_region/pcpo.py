"""PCPO (Yang et al. 2020): a TRPO step on the reward, then its KL projection onto the linearized constraint."""

from __future__ import annotations

import dataclasses

import jax

from crax.core.params import ranged
from crax.learners.trust_region.family import Linearized, LinearizedConfig, LinearizedPPO
from crax.learners.trust_region.steps import pcpo_direction


@dataclasses.dataclass(frozen=True)
class PCPOConfig(LinearizedConfig):
    """PCPO hyperparameters: the trust-region fields (OmniSafe's PCPO tries 200 line-search steps)."""

    backtrack_steps: int = ranged(200, ge=1, integer=True)
    """Line-search tries at most; when none is accepted the actor stays as it was."""


class PCPO(LinearizedPPO, name="pcpo", config=PCPOConfig):
    """Projection-based constrained policy optimization: reward step, KL projection
    (:func:`~crax.learners.trust_region.steps.pcpo_direction`), then a line search on KL ≤ δ and the cost
    surrogate."""

    def direction(self, lin: Linearized) -> tuple[jax.Array, bool, dict[str, jax.Array]]:
        direction, projection = pcpo_direction(lin.x, lin.p, lin.q, lin.r, lin.s, lin.c, self.config.target_kl)
        return direction, False, {"pcpo/projection": projection}
