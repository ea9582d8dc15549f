"""The config bases of the learners named after OmniSafe's algorithms (``cppo-pid``, ``pdo``, ``ipo``,
``rcpo``, the Simmer and early-terminated learners): OmniSafe 0.5's defaults where they are the
algorithm's choices (its ``configs/on-policy/*.yaml``); the batch, the networks and the critics'
optimizer stay the PPO family's (SPEC §5), so every learner trains on the same batch."""

from __future__ import annotations

import dataclasses

from crax.core.params import ranged
from crax.learners.on_policy.family import PPOConfig
from crax.learners.rules import LagrangianFields, LambdaOptimizer


@dataclasses.dataclass(frozen=True)
class OmniSafePPOConfig(PPOConfig):
    """The PPO family's fields with the defaults of OmniSafe's PPO-based yaml files (PPO, CPPOPID, PDO,
    IPO, PPOSaute, PPOSimmerPID, PPOEarlyTerminated): ``clip`` 0.2, ``entropy_coef`` 0 and the epochs'
    KL early stop at ``target_kl`` 0.02 (``kl_early_stop``)."""

    clip_epsilon: float = ranged(0.2, gt=0, le=1)
    """PPO ratio clip ε (OmniSafe's ``clip``)."""
    entropy_cost: float = ranged(0.0, ge=0)
    """Weight of the policy entropy bonus (OmniSafe's ``entropy_coef``)."""
    target_kl: float | None = ranged(0.02, gt=0, optional=True)
    """The epochs stop after the first whose mean KL passes it (OmniSafe's ``kl_early_stop``, ``target_kl``)."""


@dataclasses.dataclass(frozen=True)
class OmniSafeLagrangeFields(LagrangianFields):
    """The Lagrangian rule's fields with OmniSafe's ``lagrange_cfgs`` (PDO.yaml, RCPO.yaml): Adam on λ at
    0.035 from λ₀ = 0.001, as OmniSafe's ``Lagrange`` steps it on the episode cost."""

    lambda_lr: float = ranged(0.035, gt=0)
    """Adam's learning rate on λ (OmniSafe's ``lambda_lr``)."""
    lambda_init: float = ranged(0.001, ge=0)
    """Initial multiplier λ₀ (OmniSafe's ``lagrangian_multiplier_init``)."""
    lambda_optimizer: LambdaOptimizer = "adam"
    """``adam``: OmniSafe's ``lambda_optimizer: Adam``; ``sgd``: crax's projected ascent on v."""
