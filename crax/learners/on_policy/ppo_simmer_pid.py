"""PPO-Simmer-PID: PPO on Saute's budget state with the budget moved by Simmer's PID controller
(OmniSafe's ``PPOSimmerPID``), through the environment and multiplier hooks only."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig
from crax.learners.rules import ConstraintRule, SimmerFields, SimmerRule


@dataclasses.dataclass(frozen=True)
class PPOSimmerPIDConfig(SimmerFields, OmniSafePPOConfig):
    """PPO-Simmer-PID hyperparameters: OmniSafe's PPO defaults plus Simmer's (:class:`SimmerFields`)."""


class PPOSimmerPID(ConstrainedPPO):
    """PPO on :class:`crax.learners.shared.budget_envs.SimmerBudget` with :class:`~crax.learners.rules.simmer.SimmerRule`'s budget."""

    name: ClassVar[str] = "ppo-simmer-pid"
    Config: ClassVar[type[PPOConfig]] = PPOSimmerPIDConfig
    Rule: ClassVar[type[ConstraintRule] | None] = SimmerRule
    config: PPOSimmerPIDConfig  # type: ignore[assignment]  # the instance of Config that __init__ stores
