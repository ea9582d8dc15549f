"""Constraint rules, the component of a learner that turns the iteration's violation into the loss's
weight on the cost; one implementation each, used by every family (:class:`ConstraintRule`)."""

from crax.learners.rules.barrier import BarrierFields, BarrierRule, barrier_penalty
from crax.learners.rules.kappa import KappaFields, KappaRule
from crax.learners.rules.lagrangian import (
    LagrangianFields,
    LagrangianRule,
    LambdaOptimizer,
    lagrangian_adam,
    lagrangian_ascent,
)
from crax.learners.rules.pid import PIDFields, PIDRule, PIDState, pid_init, pid_step
from crax.learners.rules.rule import (
    ConstraintRule,
    ControllerState,
    Multiplier,
    PenaltyRule,
    lagrangian_advantage,
    weighted_cost,
)
from crax.learners.rules.simmer import SimmerFields, SimmerRule, SimmerState, simmer_init, simmer_step

__all__ = [
    "BarrierFields", "BarrierRule", "ConstraintRule", "ControllerState", "KappaFields", "KappaRule",
    "LagrangianFields", "LagrangianRule", "LambdaOptimizer", "Multiplier", "PIDFields", "PIDRule", "PIDState",
    "PenaltyRule", "SimmerFields", "SimmerRule", "SimmerState", "barrier_penalty", "lagrangian_adam",
    "lagrangian_advantage", "lagrangian_ascent", "pid_init", "pid_step", "simmer_init", "simmer_step", "weighted_cost",
]
