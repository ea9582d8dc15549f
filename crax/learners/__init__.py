"""Learners: the constrained PPO family (:class:`ConstrainedPPO` + :class:`Trainer`, small hook overrides), the
trust-region learners on the same base (:mod:`~crax.learners.trust_region`: TRPO-Lag, CPO, PCPO; CUP) and the
parts every family shares (:mod:`~crax.learners.config`: run and constraint fields; :mod:`~crax.learners.networks`;
:mod:`~crax.learners.multipliers`: the multiplier rules)."""

from crax.core.params import Range, ranged
from crax.learners.base import (
    ConstrainedPPO,
    IterationBatch,
    Multiplier,
    PolicyBatch,
    PPOConfig,
    clipped_surrogate,
)
from crax.learners.config import ConstraintConfig, RunConfig
from crax.learners.cpo import CPO, CPOConfig
from crax.learners.crpo import CRPO
from crax.learners.cup import CUP, CUPConfig
from crax.learners.focops import FOCOPS, FOCOPSConfig
from crax.learners.p3o import P3O, P3OConfig
from crax.learners.pcpo import PCPO, PCPOConfig
from crax.learners.ppo import PPO
from crax.learners.ppo_cost import PPOCost, PPOCostConfig
from crax.learners.ppo_lag import PPOLag, PPOLagConfig
from crax.learners.ppo_pid import PPOPID, PPOPIDConfig
from crax.learners.ppo_saute import PPOSaute, PPOSauteConfig
from crax.learners.trainer import Trainer, TrainState, gae
from crax.learners.trpo_lag import TRPOLag, TRPOLagConfig
from crax.learners.trust_region import TrustRegionConfig, TrustRegionPPO

BUILTIN_LEARNERS: tuple[type[ConstrainedPPO], ...] = (PPO, PPOCost, PPOLag, PPOPID, PPOSaute, P3O, FOCOPS, CRPO,
                                                      TRPOLag, CPO, PCPO, CUP)
"""The learners registered by crax's built-in plugin."""

__all__ = [
    "BUILTIN_LEARNERS",
    "CPO",
    "CRPO",
    "CUP",
    "FOCOPS",
    "P3O",
    "PCPO",
    "PPO",
    "PPOCost",
    "PPOLag",
    "PPOPID",
    "PPOSaute",
    "ConstrainedPPO",
    "CPOConfig",
    "CUPConfig",
    "ConstraintConfig",
    "FOCOPSConfig",
    "IterationBatch",
    "Multiplier",
    "P3OConfig",
    "PCPOConfig",
    "PPOConfig",
    "PPOCostConfig",
    "PPOLagConfig",
    "PPOPIDConfig",
    "PPOSauteConfig",
    "PolicyBatch",
    "Range",
    "RunConfig",
    "TRPOLag",
    "TRPOLagConfig",
    "TrainState",
    "Trainer",
    "TrustRegionConfig",
    "TrustRegionPPO",
    "clipped_surrogate",
    "gae",
    "ranged",
]
