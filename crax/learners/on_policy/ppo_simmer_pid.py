"""PPO-Simmer-PID: PPO on Saute's budget state with the budget moved by Simmer's PID controller
(OmniSafe's ``PPOSimmerPID``), through the environment and multiplier hooks only."""

from __future__ import annotations

import dataclasses

from crax.learners.on_policy.family import ConstrainedPPO
from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig
from crax.learners.rules import SimmerFields, SimmerRule


@dataclasses.dataclass(frozen=True)
class PPOSimmerPIDConfig(SimmerFields, OmniSafePPOConfig):
    """PPO-Simmer-PID hyperparameters: OmniSafe's PPO defaults plus Simmer's (:class:`SimmerFields`)."""


class PPOSimmerPID(ConstrainedPPO, name="ppo-simmer-pid", config=PPOSimmerPIDConfig, rule=SimmerRule):
    """PPO on :class:`crax.learners.shared.budget_envs.SimmerBudget` with :class:`~crax.learners.rules.simmer.SimmerRule`'s budget."""

