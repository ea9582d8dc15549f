"""Learners: the constrained PPO family (:class:`ConstrainedPPO` + :class:`Trainer`, small hook overrides), the
trust-region learners on the same base (:mod:`~crax.learners.trust_region`: TRPO-Lag, CPO, PCPO; CUP), the
off-policy family (:class:`OffPolicyLearner` + :class:`OffPolicyTrainer`: SAC, DDPG, TD3 and their Lagrangian and PID
variants) and the parts every family shares (:class:`Learner`; :mod:`~crax.learners.config`: run and constraint
fields; :mod:`~crax.learners.loop`: run plumbing, rollout and evaluation; :mod:`~crax.learners.networks`;
:mod:`~crax.learners.multipliers`: the multiplier rules; :mod:`~crax.learners.families`: which trainer runs which
family)."""

from crax.core.params import Range, ranged
from crax.learners.base import (
    ConstrainedPPO,
    IterationBatch,
    PolicyBatch,
    PPOConfig,
    clipped_surrogate,
)
from crax.learners.config import ConstraintConfig, RunConfig
from crax.learners.cpo import CPO, CPOConfig
from crax.learners.cppo_pid import CPPOPID, CPPOPIDConfig
from crax.learners.crpo import CRPO, CRPOConfig
from crax.learners.cup import CUP, CUPConfig
from crax.learners.ddpg import DDPG, DDPGConfig
from crax.learners.ddpg_lag import DDPGLag, DDPGLagConfig
from crax.learners.ddpg_pid import DDPGPID, DDPGPIDConfig
from crax.learners.families import make_trainer
from crax.learners.focops import FOCOPS, FOCOPSConfig
from crax.learners.ipo import IPO, IPOConfig
from crax.learners.learner import ControllerState, Learner, Multiplier
from crax.learners.loop import BaseTrainer
from crax.learners.off_policy import OffPolicyConfig, OffPolicyLearner
from crax.learners.off_policy_trainer import OffPolicyTrainer
from crax.learners.omnisafe_defaults import OmniSafeLagrangeFields, OmniSafePPOConfig
from crax.learners.p3o import P3O, P3OConfig
from crax.learners.pcpo import PCPO, PCPOConfig
from crax.learners.pdo import PDO, PDOConfig
from crax.learners.ppo import PPO
from crax.learners.ppo_cost import PPOCost, PPOCostConfig
from crax.learners.ppo_early_terminated import PPOEarlyTerminated
from crax.learners.ppo_lag import PPOLag, PPOLagConfig
from crax.learners.ppo_pid import PPOPID, PPOPIDConfig
from crax.learners.ppo_saute import PPOSaute, PPOSauteConfig
from crax.learners.ppo_simmer_pid import PPOSimmerPID, PPOSimmerPIDConfig
from crax.learners.rcpo import RCPO, RCPOConfig
from crax.learners.replay import ReplayBuffer
from crax.learners.sac import SAC, SACConfig
from crax.learners.sac_lag import SACLag, SACLagConfig
from crax.learners.sac_pid import SACPID, SACPIDConfig
from crax.learners.simmer_controller import SimmerController, SimmerFields
from crax.learners.td3 import TD3, TD3Config
from crax.learners.td3_lag import TD3Lag, TD3LagConfig
from crax.learners.td3_pid import TD3PID, TD3PIDConfig
from crax.learners.trainer import Trainer, TrainState, gae
from crax.learners.trpo import TRPO
from crax.learners.trpo_early_terminated import TRPOEarlyTerminated
from crax.learners.trpo_lag import TRPOLag, TRPOLagConfig
from crax.learners.trpo_pid import TRPOPID, TRPOPIDConfig
from crax.learners.trpo_saute import TRPOSaute, TRPOSauteConfig
from crax.learners.trpo_simmer_pid import TRPOSimmerPID, TRPOSimmerPIDConfig
from crax.learners.trust_region import TrustRegionConfig, TrustRegionPPO

BUILTIN_LEARNERS: tuple[type[Learner], ...] = (PPO, PPOCost, PPOLag, PPOPID, PPOSaute, P3O, FOCOPS, CRPO,
                                               TRPOLag, CPO, PCPO, CUP, TRPO, TRPOPID, CPPOPID, RCPO, PDO, IPO,
                                               TRPOSaute, PPOSimmerPID, TRPOSimmerPID, PPOEarlyTerminated,
                                               TRPOEarlyTerminated, SAC, SACLag, SACPID, DDPG, DDPGLag,
                                               DDPGPID, TD3, TD3Lag, TD3PID)
"""The learners registered by crax's built-in plugin."""

__all__ = [
    "BUILTIN_LEARNERS",
    "CPPOPID",
    "CPPOPIDConfig",
    "IPO",
    "IPOConfig",
    "OmniSafeLagrangeFields",
    "OmniSafePPOConfig",
    "PDO",
    "PDOConfig",
    "PPOEarlyTerminated",
    "PPOSimmerPID",
    "PPOSimmerPIDConfig",
    "RCPO",
    "RCPOConfig",
    "SimmerController",
    "SimmerFields",
    "TRPO",
    "TRPOEarlyTerminated",
    "TRPOPID",
    "TRPOPIDConfig",
    "TRPOSaute",
    "TRPOSauteConfig",
    "TRPOSimmerPID",
    "TRPOSimmerPIDConfig",
    "BaseTrainer",
    "CPO",
    "CPOConfig",
    "CRPO",
    "CRPOConfig",
    "CUP",
    "CUPConfig",
    "DDPG",
    "DDPGConfig",
    "DDPGLag",
    "DDPGLagConfig",
    "DDPGPID",
    "DDPGPIDConfig",
    "ConstrainedPPO",
    "ConstraintConfig",
    "FOCOPS",
    "FOCOPSConfig",
    "IterationBatch",
    "Learner",
    "Multiplier",
    "ControllerState",
    "OffPolicyConfig",
    "OffPolicyLearner",
    "OffPolicyTrainer",
    "P3O",
    "P3OConfig",
    "PCPO",
    "PCPOConfig",
    "PPO",
    "PPOConfig",
    "PPOCost",
    "PPOCostConfig",
    "PPOLag",
    "PPOLagConfig",
    "PPOPID",
    "PPOPIDConfig",
    "PPOSaute",
    "PPOSauteConfig",
    "PolicyBatch",
    "Range",
    "ReplayBuffer",
    "RunConfig",
    "SAC",
    "SACConfig",
    "SACLag",
    "SACLagConfig",
    "SACPID",
    "SACPIDConfig",
    "TD3",
    "TD3Config",
    "TD3Lag",
    "TD3LagConfig",
    "TD3PID",
    "TD3PIDConfig",
    "TRPOLag",
    "TRPOLagConfig",
    "TrainState",
    "Trainer",
    "TrustRegionConfig",
    "TrustRegionPPO",
    "clipped_surrogate",
    "gae",
    "make_trainer",
    "ranged",
]
