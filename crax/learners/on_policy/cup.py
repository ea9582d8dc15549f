"""CUP (Yang et al. 2022): a PPO performance-improvement step, then a first-order projection step."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
from flax import nnx

from crax.core.params import ranged
from crax.learners.on_policy.family import ConstrainedPPO, IterationBatch, PPOConfig
from crax.learners.on_policy.losses import (
    clip_fraction,
    cup_cost_coef,
    cup_performance_loss,
    cup_projection_loss,
    mean_entropy,
    mean_kl,
    probability_ratio,
)
from crax.learners.rules import LagrangianFields, LagrangianRule, LambdaOptimizer
from crax.learners.shared.networks import gaussian_kl
from crax.learners.shared.optimizers import actor_optimizer


@dataclasses.dataclass(frozen=True)
class CUPConfig(LagrangianFields, PPOConfig):
    """CUP hyperparameters: the shared PPO fields (its performance step is PPO's clipped surrogate on
    Â_r), the multiplier's (:class:`LagrangianFields`, with OmniSafe's CUP.yaml defaults: Adam at 0.035
    from 0.001, capped at 2) and the KL that ends either step's epochs."""

    lambda_lr: float = ranged(0.035, gt=0)
    """Adam's learning rate for λ (CUP.yaml's ``lambda_lr``)."""
    lambda_init: float = ranged(0.001, ge=0)
    """Initial multiplier λ₀."""
    lambda_optimizer: LambdaOptimizer = "adam"
    """λ's rule: OmniSafe's Adam on −λ·(J_c − d) (``adam``) or projected ascent on v (``sgd``)."""
    lambda_max: float | None = ranged(2.0, gt=0, optional=True)
    """Upper clip λ_max (CUP.yaml's ``lagrangian_upper_bound``)."""
    target_kl: float = ranged(0.01, gt=0)
    """δ: a step's epochs stop after the first whose mean KL from the step's starting policy exceeds it."""


def projection_loss(actor: nnx.Module, mb: dict[str, jax.Array], lam: jax.Array,
                    coef: float) -> tuple[jax.Array, dict[str, jax.Array]]:
    """CUP's projection loss on a minibatch, mean(λ·coef·ρ·Â_c + KL(π_θ ‖ π_perf)) (OmniSafe's
    ``CUP._loss_pi_cost``): ``mb`` holds the actor's inputs ``x``, ``u``, the rollout's ``logp``, ``adv_c``
    and the performance step's policy ``perf_loc``/``perf_scale``; ``coef`` is (1 − γλ_GAE)/(1 − γ)."""
    loc, scale = actor(mb["x"])
    ratio = probability_ratio(mb["u"], loc, scale, mb["logp"])
    kl = gaussian_kl(loc, scale, mb["perf_loc"], mb["perf_scale"])
    loss = cup_projection_loss(ratio, mb["adv_c"], kl, lam, coef)
    return loss, {"loss/cup_projection": loss}


class CUP(ConstrainedPPO, name="cup", config=CUPConfig, rule=LagrangianRule, budgets=True):
    """Performance step: PPO epochs on the clipped surrogate of Â_r. Projection step: epochs on
    mean(λ (1 − γλ_GAE)/(1 − γ) ρ Â_c + KL(π_θ ‖ π_perf)), π_perf the policy after the first step.
    Both run on the actor with its own Adam and stop once the KL passes ``target_kl``; the critics
    regress on their own (base value loss); λ by the Lagrangian rule once per iteration (OmniSafe's CUP:
    Adam on −λ·(J_c − d), clipped to [0, 2]; PPO-Lag's rule, whose advantage hook CUP's update does not
    call)."""

    config: CUPConfig  # the instance of Config that __init__ stores
    rule: LagrangianRule

    def __init__(self, config: PPOConfig, observation_spec: Any, action_size: int, episode_length: int, *,
                 rngs: nnx.Rngs):
        super().__init__(config, observation_spec, action_size, episode_length, rngs=rngs)
        self.actor_optimizer = nnx.Optimizer(self.actor, actor_optimizer(config), wrt=nnx.Param)

    def policy_update(self, optimizer: nnx.Optimizer, batch: IterationBatch, key: jax.Array) -> dict[str, jax.Array]:
        c = self.config
        k_critics, k_perf, k_proj = jax.random.split(key, 3)
        x = self.actor_input(batch.samples["obs"])  # before the critics' regression moves a shared encoder
        start = jax.lax.stop_gradient(self.actor(x))
        samples = {**batch.samples, "x": x}
        lam = self.rule.weight()
        coef = cup_cost_coef(c.discounting, c.gae_lambda)

        def kl_from(ref):
            return lambda actor: mean_kl(ref[0], ref[1], *actor(x))

        def performance(actor, mb):
            loc, scale = actor(mb["x"])
            ratio = probability_ratio(mb["u"], loc, scale, mb["logp"])
            entropy = mean_entropy(scale)
            loss = cup_performance_loss(ratio, mb["adv_r"], entropy, c.clip_epsilon, c.entropy_cost)
            return loss, {"loss/policy": loss, "policy/entropy": entropy,
                          "policy/clip_fraction": clip_fraction(ratio, c.clip_epsilon)}

        def projection(actor, mb):
            return projection_loss(actor, mb, lam, coef)

        perf = self.minibatch_epochs(self.actor_optimizer, samples, k_perf, performance, module=self.actor,
                                     stop=lambda a: kl_from(start)(a) > c.target_kl)
        mid = jax.lax.stop_gradient(self.actor(x))
        proj = self.minibatch_epochs(self.actor_optimizer, {**samples, "perf_loc": mid[0], "perf_scale": mid[1]},
                                     k_proj, projection, module=self.actor,
                                     stop=lambda a: kl_from(mid)(a) > c.target_kl)
        metrics = self.fit_critics(optimizer, batch.samples, k_critics)
        return {
            **metrics, **{k: v for k, v in perf.items() if k != "epochs"},
            "loss/cup_projection": proj["loss/cup_projection"],
            "cup/performance_epochs": perf["epochs"], "cup/projection_epochs": proj["epochs"],
            "cup/projection_kl": kl_from(mid)(self.actor), "policy/kl": kl_from(start)(self.actor),
        }
