"""IPO: interior-point policy optimization, PPO with a log-barrier penalty on the episode cost (OmniSafe's ``IPO``)."""

from __future__ import annotations

import dataclasses

from crax.learners.on_policy.family import ConstrainedPPO
from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig
from crax.learners.rules import BarrierFields, BarrierRule


@dataclasses.dataclass(frozen=True)
class IPOConfig(BarrierFields, OmniSafePPOConfig):
    """IPO hyperparameters: OmniSafe's PPO-family defaults plus the barrier's (:class:`BarrierFields`, IPO.yaml)."""


class IPO(ConstrainedPPO, name="ipo", config=IPOConfig, rule=BarrierRule, budgets=True):
    """Clip surrogate on (Â_r − p Â_c)/(1 + p) with the barrier's gradient weight p = κ/(d − J_c) (one per
    budgeted term), J_c = T·v + d; p is set once per iteration and logged as ``multiplier/ipo_penalty``."""

