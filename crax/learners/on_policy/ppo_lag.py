"""PPO-Lag: Lagrangian PPO, the PPO family composed with the Lagrangian rule."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.rules import ConstraintRule, LagrangianFields, LagrangianRule


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(LagrangianFields, PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's (:class:`LagrangianFields`)."""


class PPOLag(ConstrainedPPO):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

    name: ClassVar[str] = "ppo-lag"
    Config: ClassVar[type[PPOConfig]] = PPOLagConfig
    Rule: ClassVar[type[ConstraintRule] | None] = LagrangianRule
    config: PPOLagConfig  # the instance of Config that __init__ stores
    supports_budgets: ClassVar[bool] = True
