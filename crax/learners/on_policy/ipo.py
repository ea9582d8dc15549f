"""IPO: interior-point policy optimization, PPO with a log-barrier penalty on the episode cost (OmniSafe's ``IPO``)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig
from crax.learners.rules import BarrierFields, BarrierRule, ConstraintRule


@dataclasses.dataclass(frozen=True)
class IPOConfig(BarrierFields, OmniSafePPOConfig):
    """IPO hyperparameters: OmniSafe's PPO-family defaults plus the barrier's (:class:`BarrierFields`, IPO.yaml)."""


class IPO(ConstrainedPPO):
    """Clip surrogate on (Â_r − p Â_c)/(1 + p) with the barrier's gradient weight p = κ/(d − J_c) (one per
    budgeted term), J_c = T·v + d; p is set once per iteration and logged as ``multiplier/ipo_penalty``."""

    name: ClassVar[str] = "ipo"
    Config: ClassVar[type[PPOConfig]] = IPOConfig
    config: IPOConfig  # the instance of Config that __init__ stores
    Rule: ClassVar[type[ConstraintRule] | None] = BarrierRule
    supports_budgets: ClassVar[bool] = True
