"""Trust-region machinery, all jittable and free of host syncs, and the base of the trust-region learners.

* :func:`fisher_operator`: θ ↦ (F + damping·I) θ with F the Fisher of the KL between the iteration's
  policy and the actor at θ, averaged over states and action dimensions (OmniSafe's measure), by
  ``jax.linearize`` (the forward product J v) and ``jax.vjp`` (the transposed product Jᵀ w) through
  the actor, with the Gaussian's own Fisher in between; F is never materialized.
* :func:`conjugate_gradient`: a fixed number of CG iterations (``lax.fori_loop``).
* :func:`backtracking_line_search`: fractions 1, β, β², … of a step, the first one accepted
  (``lax.while_loop``, at most a fixed number of tries).
* :class:`PolicySpace`: the actor as a function of one flat parameter vector on the iteration's
  batch, with the surrogates and the KL the steps and the line search evaluate.
* :class:`TrustRegionPPO`: the base of ``trpo-lag``, ``cpo``, ``pcpo`` and ``crpo``. Its update hook
  regresses the critics with the base's value loss, then steps the actor by
  :meth:`TrustRegionPPO.actor_step` (default: TRPO on the advantage the
  :meth:`~crax.learners.on_policy.family.ConstrainedPPO.advantage` hook mixes).
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
from crax.learners.shared.networks import gaussian_entropy, gaussian_kl_per_dim, gaussian_log_prob

EPS = 1e-8


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
    OmniSafe's ``cpo.py`` of 2022; crax's only form before decision 67), with which CPO ends far over the
    bound on PointGoal1. docs/learners.md, "Why CPO ended over the bound"."""

    stored_defaults: ClassVar[dict[str, object]] = {**PPOConfig.stored_defaults, "constraint_value": "per-step"}
    """What a run stored before the field existed ran with (read by ``crax.runs.checkpoint.config_from_dict``)."""


def fisher_operator(dist_fn: Callable[[jax.Array], tuple[jax.Array, jax.Array]], theta: jax.Array,
                    damping: float | jax.Array = 0.0) -> Callable[[jax.Array], jax.Array]:
    """v ↦ (F + damping·I) v, F the Hessian at θ of KL(π_θ(·|s) ‖ π_θ'(·|s)) over θ', averaged over the
    states and the action dimensions (:func:`~crax.learners.shared.networks.gaussian_kl_per_dim`, OmniSafe's
    ``NaturalPG._fvp``), which is the policy's Fisher information per action dimension: Jᵀ M J v, with J
    the Jacobian of ``dist_fn`` (θ ↦ the Gaussians' ``(loc, scale)``, leading axis the states) and M the
    Hessian of that mean KL in those outputs."""
    out, jvp_fn = jax.linearize(dist_fn, theta)
    _, vjp_fn = jax.vjp(dist_fn, theta)
    ref = jax.lax.stop_gradient(out)
    kl_grad = jax.grad(lambda o: jnp.mean(gaussian_kl_per_dim(ref[0], ref[1], o[0], o[1])))

    def fvp(v: jax.Array) -> jax.Array:
        m_jv = jax.jvp(kl_grad, (out,), (jvp_fn(v),))[1]
        return vjp_fn(m_jv)[0] + damping * v

    return fvp


def conjugate_gradient(mvp: Callable[[jax.Array], jax.Array], b: jax.Array, iterations: int,
                       eps: float = 0.0) -> jax.Array:
    """Approximately solves A x = b for symmetric positive (semi)definite A given as ``mvp`` (x ↦ A x),
    by ``iterations`` conjugate-gradient steps from x = 0 (a step on a zero residual does nothing).

    ``eps`` is added to the denominators of both step sizes, as OmniSafe's ``conjugate_gradients`` adds
    1e-6 (its tests set it to compare updates; docs/DECISIONS.md, decision 78): once the squared residual nears ``eps`` the
    search directions lose their conjugacy and the solve stalls (0.2 % off the exact solution on
    ``tests/learners/test_omnisafe_trust_region.py``'s batch), so crax leaves it at 0."""

    def body(_, carry):
        x, r, p, rr = carry
        ap = mvp(p)
        pap = p @ ap + eps
        alpha = jnp.where(pap > 0, rr / jnp.where(pap > 0, pap, 1.0), 0.0)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = r @ r
        rr_eps = rr + eps
        beta = jnp.where(rr_eps > 0, rr_new / jnp.where(rr_eps > 0, rr_eps, 1.0), 0.0)
        return x, r, r + beta * p, rr_new

    return jax.lax.fori_loop(0, iterations, body, (jnp.zeros_like(b), b, b, b @ b))[0]


def backtracking_line_search(accept: Callable[[jax.Array], jax.Array], coef: float,
                             max_steps: int) -> tuple[jax.Array, jax.Array]:
    """Tries the fractions 1, β, β², … (``max_steps`` of them) of a step in turn and stops at the first
    that ``accept(fraction)`` takes. Returns ``(fraction, try)``: the accepted fraction and its 1-based
    try, or ``(0, 0)`` when none was accepted."""

    def cond(carry):
        tries, ok = carry
        return jnp.logical_and(~ok, tries < max_steps)

    def body(carry):
        tries, _ = carry
        return tries + 1, accept(jnp.power(coef, tries.astype(jnp.float32)))

    tries, ok = jax.lax.while_loop(cond, body, (jnp.zeros((), jnp.int32), jnp.zeros((), bool)))
    fraction = jnp.where(ok, jnp.power(coef, (tries - 1).astype(jnp.float32)), 0.0)
    return fraction, jnp.where(ok, tries, 0)


class PolicySpace:
    """The actor as a function of one flat parameter vector θ on one iteration's batch.

    ``theta`` is the actor's current parameters; ``dist(θ)`` the Gaussians at the batch's (normalized)
    observations; the reference policy π_old of the KL and the Fisher is the actor at ``theta`` (after
    this iteration's normalizer update); probability ratios are taken against the rollout policy's
    stored log-probabilities, as in PPO.
    """

    def __init__(self, learner: ConstrainedPPO, samples: dict[str, jax.Array]):
        graphdef, params, rest = nnx.split(learner.actor, nnx.Param, ...)
        self.theta, self._unravel = ravel_pytree(params)
        self._graphdef, self._rest = graphdef, rest
        self._x = jax.lax.stop_gradient(learner.normalize(samples["obs"]))
        self._u, self._logp = samples["u"], samples["logp"]
        self.ref = jax.lax.stop_gradient(self.dist(self.theta))

    def params(self, theta: jax.Array) -> nnx.State:
        """θ as the actor's parameter state (for ``nnx.update(learner.actor, ...)``)."""
        return self._unravel(theta)

    def dist(self, theta: jax.Array) -> tuple[jax.Array, jax.Array]:
        return nnx.merge(self._graphdef, self._unravel(theta), self._rest)(self._x)

    def ratio(self, theta: jax.Array) -> jax.Array:
        loc, scale = self.dist(theta)
        return jnp.exp(gaussian_log_prob(self._u, loc, scale) - self._logp)

    def surrogate(self, theta: jax.Array, adv: jax.Array) -> jax.Array:
        """mean(ρ_θ · Â) (to maximize; with Â the normalized cost advantage, the cost surrogate)."""
        return jnp.mean(self.ratio(theta) * adv)

    def entropy(self, theta: jax.Array) -> jax.Array:
        return jnp.mean(gaussian_entropy(self.dist(theta)[1]))

    def kl(self, theta: jax.Array) -> jax.Array:
        """KL(π_old ‖ π_θ) averaged over the batch's states and the action dimensions: the measure δ
        bounds (OmniSafe's ``kl_divergence(Normal, Normal).mean()``)."""
        loc, scale = self.dist(theta)
        return jnp.mean(gaussian_kl_per_dim(self.ref[0], self.ref[1], loc, scale))

    def fisher(self, damping: float) -> Callable[[jax.Array], jax.Array]:
        return fisher_operator(self.dist, self.theta, damping)


def trpo_direction(x: jax.Array, xhx: jax.Array, target_kl: float) -> jax.Array:
    """The natural-gradient step scaled to the trust region's edge: sqrt(2δ / xᵀHx) · x, x ≈ H⁻¹g."""
    return jnp.sqrt(2.0 * target_kl / (xhx + EPS)) * x


class TrustRegionPPO(ConstrainedPPO):
    """Base of the trust-region learners: the critics regress by the base's minibatch epochs on the
    value loss; the actor steps once per iteration on the whole batch by :meth:`actor_step`.

    With no hook overridden this is TRPO on the reward (δ = ``target_kl``, CG with damping,
    backtracking on KL ≤ δ and surrogate improvement)."""

    name: ClassVar[str] = "trust-region"
    Config: ClassVar[type[PPOConfig]] = TrustRegionConfig
    config: TrustRegionConfig  # the instance of Config that __init__ stores

    def policy_update(self, optimizer: nnx.Optimizer, batch: IterationBatch, key: jax.Array) -> dict[str, jax.Array]:
        metrics = self.fit_critics(optimizer, batch.samples, key)
        space = PolicySpace(self, batch.samples)
        step, stats = self.actor_step(space, batch)
        nnx.update(self.actor, space.params(space.theta + step))
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
            gain = objective(theta) - before
            return jnp.isfinite(gain) & (gain >= 0) & (space.kl(theta) <= c.target_kl)

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
    c = batch.violation / batch.cost_scale * (1 if per_step else learner.episode_length)
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
        ok = jnp.isfinite(gain) & jnp.isfinite(cost_change) & (space.kl(theta) <= delta)
        return ok & (cost_change <= jnp.maximum(-lin.c, 0.0)) & (~jnp.asarray(check_reward) | (gain >= 0))

    step, stats = learner.searched_step(space, direction, accept, lin.reward)
    change = lin.cost(space.theta + step) - cost_before
    return step, {**stats, "trust_region/cost_surrogate_change": change,
                  "trust_region/constraint_value": lin.c}
