"""PPO-Lag: Lagrangian PPO, the PPO family composed with the Lagrangian rule."""

from __future__ import annotations

import dataclasses

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.rules import LagrangianFields, LagrangianRule


@dataclasses.dataclass(frozen=True)
class PPOLagConfig(LagrangianFields, PPOConfig):
    """PPO-Lag hyperparameters: the shared PPO fields plus the multiplier's (:class:`LagrangianFields`)."""


class PPOLag(ConstrainedPPO, name="ppo-lag", config=PPOLagConfig, rule=LagrangianRule, budgets=True):
    """Clip surrogate on (Â_r − λ Â_c)/(1 + λ); λ ← max(0, λ + η_λ v) once per iteration."""

