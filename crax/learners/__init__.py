"""Learners: the constrained PPO family (:class:`ConstrainedPPO` + :class:`Trainer`, small hook overrides), the
trust-region learners on the same base (:mod:`~crax.learners.trust_region.family`: TRPO-Lag, CPO, PCPO; CUP), the
off-policy family (:class:`OffPolicyLearner` + :class:`OffPolicyTrainer`: SAC, DDPG, TD3 and their Lagrangian and PID
variants, WCSAC) and the parts every family shares (:class:`Learner`; :mod:`~crax.learners.shared.config`: run and constraint
fields; :mod:`~crax.learners.shared.trainer`: run plumbing, rollout and evaluation; :mod:`~crax.learners.shared.networks`;
:mod:`~crax.learners.rules`: the constraint rules a learner is composed of; :mod:`~crax.learners.families`: which trainer runs which
family)."""

from crax.core.params import Range, ranged
from crax.learners.families import make_trainer
from crax.learners.off_policy.ddpg import DDPG, DDPGConfig
from crax.learners.off_policy.ddpg_lag import DDPGLag, DDPGLagConfig
from crax.learners.off_policy.ddpg_pid import DDPGPID, DDPGPIDConfig
from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLearner
from crax.learners.off_policy.replay import ReplayBuffer
from crax.learners.off_policy.sac import SAC, SACConfig
from crax.learners.off_policy.sac_lag import SACLag, SACLagConfig
from crax.learners.off_policy.sac_pid import SACPID, SACPIDConfig
from crax.learners.off_policy.td3 import TD3, TD3Config
from crax.learners.off_policy.td3_lag import TD3Lag, TD3LagConfig
from crax.learners.off_policy.td3_pid import TD3PID, TD3PIDConfig
from crax.learners.off_policy.trainer import OffPolicyTrainer
from crax.learners.off_policy.wcsac import WCSAC, WCSACConfig
from crax.learners.on_policy.cppo_pid import CPPOPID, CPPOPIDConfig
from crax.learners.on_policy.cup import CUP, CUPConfig
from crax.learners.on_policy.family import (
    ConstrainedPPO,
    IterationBatch,
    PolicyBatch,
    PPOConfig,
    clipped_surrogate,
)
from crax.learners.on_policy.focops import FOCOPS, FOCOPSConfig
from crax.learners.on_policy.ipo import IPO, IPOConfig
from crax.learners.on_policy.mappo_lag import MAPPOLag, MAPPOLagConfig
from crax.learners.on_policy.omnisafe_defaults import OmniSafeLagrangeFields, OmniSafePPOConfig
from crax.learners.on_policy.p3o import P3O, P3OConfig
from crax.learners.on_policy.pdo import PDO, PDOConfig
from crax.learners.on_policy.ppo import PPO
from crax.learners.on_policy.ppo_cost import PPOCost, PPOCostConfig
from crax.learners.on_policy.ppo_early_terminated import PPOEarlyTerminated
from crax.learners.on_policy.ppo_lag import PPOLag, PPOLagConfig
from crax.learners.on_policy.ppo_pid import PPOPID, PPOPIDConfig
from crax.learners.on_policy.ppo_saute import PPOSaute, PPOSauteConfig
from crax.learners.on_policy.ppo_simmer_pid import PPOSimmerPID, PPOSimmerPIDConfig
from crax.learners.on_policy.trainer import Trainer, TrainState, gae
from crax.learners.rules import (
    ConstraintRule,
    LagrangianFields,
    LagrangianRule,
    PIDFields,
    PIDRule,
    SimmerFields,
    SimmerRule,
)
from crax.learners.shared.config import ConstraintConfig, RunConfig
from crax.learners.shared.learner import ControllerState, Learner, Multiplier
from crax.learners.shared.trainer import BaseTrainer
from crax.learners.trust_region.cpo import CPO, CPOConfig
from crax.learners.trust_region.crpo import CRPO, CRPOConfig
from crax.learners.trust_region.family import TrustRegionConfig, TrustRegionPPO
from crax.learners.trust_region.pcpo import PCPO, PCPOConfig
from crax.learners.trust_region.rcpo import RCPO, RCPOConfig
from crax.learners.trust_region.trpo import TRPO
from crax.learners.trust_region.trpo_early_terminated import TRPOEarlyTerminated
from crax.learners.trust_region.trpo_lag import TRPOLag, TRPOLagConfig
from crax.learners.trust_region.trpo_pid import TRPOPID, TRPOPIDConfig
from crax.learners.trust_region.trpo_saute import TRPOSaute, TRPOSauteConfig
from crax.learners.trust_region.trpo_simmer_pid import TRPOSimmerPID, TRPOSimmerPIDConfig

BUILTIN_LEARNERS: tuple[type[Learner], ...] = (PPO, PPOCost, PPOLag, MAPPOLag, PPOPID, PPOSaute, P3O, FOCOPS, CRPO,
                                               TRPOLag, CPO, PCPO, CUP, TRPO, TRPOPID, CPPOPID, RCPO, PDO, IPO,
                                               TRPOSaute, PPOSimmerPID, TRPOSimmerPID, PPOEarlyTerminated,
                                               TRPOEarlyTerminated, SAC, SACLag, SACPID, DDPG, DDPGLag,
                                               DDPGPID, TD3, TD3Lag, TD3PID, WCSAC)
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
    "SimmerRule",
    "ConstraintRule",
    "LagrangianFields",
    "LagrangianRule",
    "PIDFields",
    "PIDRule",
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
    "MAPPOLag",
    "MAPPOLagConfig",
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
    "WCSAC",
    "WCSACConfig",
    "clipped_surrogate",
    "gae",
    "make_trainer",
    "ranged",
]
