"""Learners: the constrained PPO family (:class:`ConstrainedPPO` + :class:`Trainer`, small hook overrides) and the
parts every family shares (:mod:`~crax.learners.config`: run and constraint fields; :mod:`~crax.learners.networks`)."""

from crax.core.params import Range, ranged
from crax.learners.base import (
    ConstrainedPPO,
    Multiplier,
    PolicyBatch,
    PPOConfig,
    clipped_surrogate,
)
from crax.learners.config import ConstraintConfig, RunConfig
from crax.learners.crpo import CRPO
from crax.learners.focops import FOCOPS, FOCOPSConfig
from crax.learners.p3o import P3O, P3OConfig
from crax.learners.ppo import PPO
from crax.learners.ppo_cost import PPOCost, PPOCostConfig
from crax.learners.ppo_lag import PPOLag, PPOLagConfig
from crax.learners.ppo_pid import PPOPID, PPOPIDConfig
from crax.learners.ppo_saute import PPOSaute, PPOSauteConfig
from crax.learners.trainer import Trainer, TrainState, gae

BUILTIN_LEARNERS: tuple[type[ConstrainedPPO], ...] = (PPO, PPOCost, PPOLag, PPOPID, PPOSaute, P3O, FOCOPS, CRPO)
"""The learners registered by crax's built-in plugin."""

__all__ = [
    "BUILTIN_LEARNERS",
    "CRPO",
    "FOCOPS",
    "P3O",
    "PPO",
    "PPOCost",
    "PPOLag",
    "PPOPID",
    "PPOSaute",
    "ConstrainedPPO",
    "ConstraintConfig",
    "FOCOPSConfig",
    "Multiplier",
    "P3OConfig",
    "PPOConfig",
    "PPOCostConfig",
    "PPOLagConfig",
    "PPOPIDConfig",
    "PPOSauteConfig",
    "PolicyBatch",
    "Range",
    "RunConfig",
    "TrainState",
    "Trainer",
    "clipped_surrogate",
    "gae",
    "ranged",
]
