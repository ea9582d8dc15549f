"""The base of the trust-region learners and what ties their step arithmetic to the actor. The arithmetic
itself (the Fisher-vector product, conjugate gradient, the line search, TRPO's, CPO's and PCPO's steps) is
pure functions in :mod:`crax.learners.trust_region.steps`, all jittable and free of host syncs.

* :class:`PolicySpace`: the actor as a function of one flat parameter vector on the iteration's
  batch, with the surrogates and the KL the steps and the line search evaluate, and its Fisher operator.
* :class:`TrustRegionPPO`: the base of ``trpo-lag``, ``cpo``, ``pcpo`` and ``crpo``. Its update hook
  steps the actor, then regresses the critics with the base's value loss; the step is
  :meth:`TrustRegionPPO.actor_step` (default: TRPO on the advantage the
  :meth:`~crax.learners.on_policy.family.ConstrainedPPO.advantage` hook mixes).
* :class:`LinearizedPPO`: the base of ``cpo`` and ``pcpo``, whose step is a closed form of the linearized
  problem (:func:`linearize`), backtracked by :func:`cost_checked_step`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, Literal

import jax
import jax.numpy as jnp
from flax import nnx
from jax.flatten_util import ravel_pytree

from crax.core.params import ranged
from crax.learners.on_policy.family import ConstrainedPPO, IterationBatch, PPOConfig
from crax.learners.on_policy.losses import mean_entropy, probability_ratio, surrogate
from crax.learners.trust_region.steps import (
    backtracking_line_search,
    conjugate_gradient,
    constraint_value,
    cost_checked_accepts,
    fisher_operator,
    mean_kl_per_dim,
    trpo_accepts,
    trpo_direction,
)


@dataclasses.dataclass(frozen=True)
class TrustRegionConfig(PPOConfig):
    """The trust-region learners' fields: the shared PPO fields (``learning_rate``, ``num_epochs`` and
    ``num_minibatches`` now drive the critics' regression alone) plus the natural-gradient step's.
    Defaults: OmniSafe's TRPO/CPO/PCPO configs (``docs/learners.md``)."""

    entropy_cost: float = ranged(0.0, ge=0)
    """Weight of the policy entropy bonus in the reward surrogate (OmniSafe: 0)."""
    target_kl: float = ranged(0.01, gt=0)
    """Trust-region size δ: the accepted step keeps KL(π_old ‖ π_new), averaged over states and action
    dimensions as OmniSafe averages it, ≤ δ (docs/DECISIONS.md, decision 78)."""
    cg_iterations: int = ranged(15, ge=1, integer=True)
    """Conjugate-gradient iterations per solve of (F + damping·I) x = g."""
    cg_damping: float = ranged(0.1, ge=0)
    """Damping added to the Fisher's diagonal in every Fisher-vector product."""
    backtrack_coef: float = ranged(0.8, gt=0, lt=1)
    """Line-search factor β: the tries are the full step, then β, β², … of it."""
    backtrack_steps: int = ranged(15, ge=1, integer=True)
    """Line-search tries at most; when none is accepted the actor stays as it was."""


ConstraintValue = Literal["per-step", "episode"]
"""The measures of c, the linearized constraint's value, that CPO and PCPO take (``constraint_value``)."""


@dataclasses.dataclass(frozen=True)
class LinearizedConfig(TrustRegionConfig):
    """The fields of the learners that step on the linearized constraint c + bᵀΔθ ≤ 0 (CPO, PCPO)."""

    constraint_value: ConstraintValue = "episode"
    """How c is measured, in the units of the cost surrogate b is the gradient of (cost advantages divided
    by their standard deviation σ_c). ``episode``: the episode cost over the bound, T·v, against per-step
    advantages, as T·v/σ_c (OmniSafe's ``cpo.py`` and ``pcpo.py`` since 2023, EpCost − limit beside
    centered cost advantages), so that a violated iteration takes CPO's pure cost-reducing step.
    ``per-step``: the per-step violation v = ĉ − d/T, as v/σ_c, T times smaller (safety-starter-agents;
    OmniSafe's ``cpo.py`` of 2022; crax's only form before docs/DECISIONS.md, decision 67), with which CPO ends far over the
    bound on PointGoal1. docs/learners.md, "Why CPO ended over the bound"."""

    stored_defaults: ClassVar[dict[str, object]] = {**PPOConfig.stored_defaults, "constraint_value": "per-step"}
    """What a run stored before the field existed ran with (read by ``crax.runs.checkpoint.config_from_dict``)."""


class PolicySpace:
    """The actor as a function of one flat parameter vector θ on one iteration's batch.

    ``theta`` is the actor's current parameters (its MLP's: on an observation with images the shared
    encoder is the critics' to train); ``dist(θ)`` the Gaussians at what the actor reads of the batch's
    observations (:meth:`~crax.learners.shared.learner.Learner.actor_input`); the reference policy π_old of the KL and the Fisher is the actor at ``theta`` (after
    this iteration's normalizer update); probability ratios are taken against the rollout policy's
    stored log-probabilities, as in PPO.
    """

    def __init__(self, learner: ConstrainedPPO, samples: dict[str, jax.Array]):
        graphdef, params, rest = nnx.split(learner.actor, nnx.Param, ...)
        self.theta, self._unravel = ravel_pytree(params)
        self._graphdef, self._rest = graphdef, rest
        self._x = learner.actor_input(samples["obs"])
        self._u, self._logp = samples["u"], samples["logp"]
        self.ref = jax.lax.stop_gradient(self.dist(self.theta))

    def params(self, theta: jax.Array) -> nnx.State:
        """θ as the actor's parameter state (for ``nnx.update(learner.actor, ...)``)."""
        return self._unravel(theta)

    def dist(self, theta: jax.Array) -> tuple[jax.Array, jax.Array]:
        return nnx.merge(self._graphdef, self._unravel(theta), self._rest)(self._x)

    def ratio(self, theta: jax.Array) -> jax.Array:
        loc, scale = self.dist(theta)
        return probability_ratio(self._u, loc, scale, self._logp)

    def surrogate(self, theta: jax.Array, adv: jax.Array) -> jax.Array:
        """mean(ρ_θ · Â) (to maximize; with Â the normalized cost advantage, the cost surrogate)."""
        return surrogate(self.ratio(theta), adv)

    def entropy(self, theta: jax.Array) -> jax.Array:
        return mean_entropy(self.dist(theta)[1])

    def kl(self, theta: jax.Array) -> jax.Array:
        """KL(π_old ‖ π_θ) averaged over the batch's states and the action dimensions: the measure δ
        bounds (OmniSafe's ``kl_divergence(Normal, Normal).mean()``)."""
        loc, scale = self.dist(theta)
        return mean_kl_per_dim(self.ref[0], self.ref[1], loc, scale)

    def fisher(self, damping: float) -> Callable[[jax.Array], jax.Array]:
        return fisher_operator(self.dist, self.theta, damping)


class TrustRegionPPO(ConstrainedPPO, name="trust-region", config=TrustRegionConfig):
    """Base of the trust-region learners: the critics regress by the base's minibatch epochs on the
    value loss; the actor steps once per iteration on the whole batch by :meth:`actor_step`.

    With no hook overridden this is TRPO on the reward (δ = ``target_kl``, CG with damping,
    backtracking on KL ≤ δ and surrogate improvement)."""

    config: TrustRegionConfig  # the instance of Config that __init__ stores

    def policy_update(self, optimizer: nnx.Optimizer, batch: IterationBatch, key: jax.Array) -> dict[str, jax.Array]:
        """The actor's step, then the critics' regression: on an observation with images the regression
        moves the shared encoder, so the step is taken on the features the rollout's policy saw (its
        reference policy is the rollout's; the two parts are independent otherwise, and the order does not
        change a flat observation's numbers)."""
        space = PolicySpace(self, batch.samples)
        step, stats = self.actor_step(space, batch)
        nnx.update(self.actor, space.params(space.theta + step))
        metrics = self.fit_critics(optimizer, batch.samples, key)
        return {**metrics, **stats}

    def actor_step(self, space: PolicySpace, batch: IterationBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        """Hook: the actor's step Δθ (flat) and its metrics. Default: TRPO on the mixed advantage."""
        c = self.config
        s = batch.samples
        adv = self.advantage(s["adv_r"], s["adv_c"], batch.violation)
        objective = lambda th: space.surrogate(th, adv) + c.entropy_cost * space.entropy(th)  # noqa: E731
        before, g = jax.value_and_grad(objective)(space.theta)
        fvp = space.fisher(c.cg_damping)
        x = conjugate_gradient(fvp, g, c.cg_iterations)
        direction = trpo_direction(x, x @ fvp(x), c.target_kl)

        def accept(fraction):
            theta = space.theta + fraction * direction
            return trpo_accepts(objective(theta) - before, space.kl(theta), c.target_kl)

        return self.searched_step(space, direction, accept, objective)

    def searched_step(self, space: PolicySpace, direction: jax.Array, accept: Callable[[jax.Array], jax.Array],
                      objective: Callable[[jax.Array], jax.Array]) -> tuple[jax.Array, dict[str, jax.Array]]:
        """Backtracks along ``direction`` until ``accept`` takes a fraction (none: no step); the step
        and the statistics every trust-region learner logs."""
        c = self.config
        fraction, tries = backtracking_line_search(accept, c.backtrack_coef, c.backtrack_steps)
        step = fraction * direction
        theta = space.theta + step
        return step, {
            "policy/kl": space.kl(theta),
            "policy/entropy": space.entropy(theta),
            "loss/policy": -objective(theta),
            "trust_region/accepted_step": tries.astype(jnp.float32),
            "trust_region/step_fraction": fraction,
            "trust_region/surrogate_gain": objective(theta) - objective(space.theta),
        }


@dataclasses.dataclass(frozen=True)
class Linearized:
    """The reward and cost surrogates around θ_old in the quantities of CPO's and PCPO's closed forms:
    g, b the gradients of the reward and cost surrogates; x ≈ H⁻¹g, p ≈ H⁻¹b (CG on the damped Fisher
    H); q = xᵀHx, r = gᵀp, s = bᵀp; c the constraint's value in the cost surrogate's units, as
    ``constraint_value`` asks: T·v / ``cost_scale`` by default (the episode's excess over the scale the
    cost advantages were normalized by), or v / ``cost_scale`` (``per-step``), with which the linearized
    constraint c + bᵀΔθ ≤ 0 asks the predicted change of the per-step cost to stay within the bound."""

    g: jax.Array
    b: jax.Array
    x: jax.Array
    p: jax.Array
    q: jax.Array
    r: jax.Array
    s: jax.Array
    c: jax.Array
    reward: Callable[[jax.Array], jax.Array]
    cost: Callable[[jax.Array], jax.Array]


def linearize(learner: ConstrainedPPO, space: PolicySpace, batch: IterationBatch) -> Linearized:
    """:class:`Linearized` for one summed cost (no per-term budgets), reward surrogate on Â_r; the
    learner's config is a :class:`LinearizedConfig`."""
    config = learner.config
    assert isinstance(config, LinearizedConfig)
    per_step = config.constraint_value == "per-step"
    c = constraint_value(batch.violation, batch.cost_scale, 1 if per_step else learner.episode_length)
    s_ = batch.samples
    reward = lambda th: space.surrogate(th, s_["adv_r"]) + config.entropy_cost * space.entropy(th)  # noqa: E731
    cost = lambda th: space.surrogate(th, s_["adv_c"])  # noqa: E731
    g = jax.grad(reward)(space.theta)
    b = jax.grad(cost)(space.theta)
    fvp = space.fisher(config.cg_damping)
    x = conjugate_gradient(fvp, g, config.cg_iterations)
    p = conjugate_gradient(fvp, b, config.cg_iterations)
    return Linearized(g=g, b=b, x=x, p=p, q=x @ fvp(x), r=g @ p, s=b @ p, c=c, reward=reward, cost=cost)


def cost_checked_step(learner: TrustRegionPPO, space: PolicySpace, lin: Linearized, direction: jax.Array,
                      check_reward: jax.Array | bool) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Backtracks along ``direction`` accepting a fraction when KL ≤ δ, the cost surrogate rises by at
    most max(−c, 0) (falls when the constraint is violated) and, where ``check_reward``, the reward
    surrogate does not fall; logs the cost surrogate's change and the per-step cost it predicts."""
    delta = learner.config.target_kl
    reward_before, cost_before = lin.reward(space.theta), lin.cost(space.theta)

    def accept(fraction):
        theta = space.theta + fraction * direction
        gain, cost_change = lin.reward(theta) - reward_before, lin.cost(theta) - cost_before
        return cost_checked_accepts(gain, cost_change, space.kl(theta), lin.c, delta, check_reward)

    step, stats = learner.searched_step(space, direction, accept, lin.reward)
    change = lin.cost(space.theta + step) - cost_before
    return step, {**stats, "trust_region/cost_surrogate_change": change,
                  "trust_region/constraint_value": lin.c}


class LinearizedPPO(TrustRegionPPO, config=LinearizedConfig):
    """Base of the learners that step on the linearized constraint c + bᵀΔθ ≤ 0 (CPO, PCPO): the actor's step
    is the closed-form :meth:`direction` of the iteration's :class:`Linearized` quantities, backtracked by
    :func:`cost_checked_step`."""

    config: LinearizedConfig  # the instance of Config that __init__ stores

    def actor_step(self, space: PolicySpace, batch: IterationBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        lin = linearize(self, space, batch)
        direction, check_reward, stats = self.direction(lin)
        step, search = cost_checked_step(self, space, lin, direction, check_reward=check_reward)
        return step, {**search, **stats}

    def direction(self, lin: Linearized) -> tuple[jax.Array, jax.Array | bool, dict[str, jax.Array]]:
        """Hook: the step's direction, whether the line search also asks the reward surrogate not to fall, and
        the direction's metrics."""
        raise NotImplementedError
