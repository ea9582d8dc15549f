"""PPO-PID (OmniSafe's CPPO-PID): Lagrangian PPO whose multiplier is the positional PID Lagrangian of
Stooke, Achiam & Abbeel (2020) on the episode cost."""

from __future__ import annotations

import dataclasses

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig
from crax.learners.rules import PIDFields, PIDRule


@dataclasses.dataclass(frozen=True)
class PPOPIDConfig(PIDFields, PPOConfig):
    """PPO-PID hyperparameters: the shared PPO fields plus the PID controller's (:class:`PIDFields`)."""


class PPOPID(ConstrainedPPO, name="ppo-pid", config=PPOPIDConfig, rule=PIDRule, budgets=True):
    """As PPO-Lag, with λ = max(0, K_p P + I + K_d max(0, D − D_{n−delay})) from the episode cost
    (:func:`~crax.learners.rules.pid.pid_step`, OmniSafe's ``PIDLagrangian``)."""

