"""P3O (Zhang et al. 2022) in OmniSafe's form: PPO's clipped reward surrogate plus an exact ReLU penalty
κ · max(0, L_c + J_c − d) on the cost surrogate, with the episode's excess over the bound."""

from __future__ import annotations

import dataclasses

import jax
from flax import nnx

from crax.learners.on_policy.family import ConstrainedPPO, IterationBatch, PolicyBatch, PPOConfig
from crax.learners.on_policy.losses import p3o_loss
from crax.learners.rules import KappaFields, KappaRule


@dataclasses.dataclass(frozen=True)
class P3OConfig(KappaFields, PPOConfig):
    """P3O hyperparameters: the shared PPO fields plus κ's (:class:`KappaFields`: OmniSafe's P3O.yaml, a
    fixed κ = 20, and an optional multiplicative schedule for it)."""


class P3O(ConstrainedPPO, name="p3o", config=P3OConfig, rule=KappaRule, budgets=True):
    """Minimizes −L_r + Σ_k κ_k · max(0, mean(ρ Â_c,k) + J_c,k − d_k), L_r the clipped reward surrogate,
    Â_c in cost per step (centred) and J_c − d = T·v the episode's excess (OmniSafe's ``P3O``; the cost
    surrogate unclipped, as its ``_loss_pi_cost``: :func:`~crax.learners.on_policy.losses.p3o_loss`)."""

    config: P3OConfig  # the instance of Config that __init__ stores
    rule: KappaRule

    def policy_update(self, optimizer: nnx.Optimizer, batch: IterationBatch, key: jax.Array) -> dict[str, jax.Array]:
        # The penalty adds the surrogate to the episode's excess: the cost advantages go back to cost
        # per step (they were divided by cost_scale only with cost_advantage="standardize").
        samples = {**batch.samples, "adv_c": batch.samples["adv_c"] * batch.cost_scale}
        return super().policy_update(optimizer, IterationBatch(samples, batch.violation, batch.cost_scale), key)

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        excess = self.episode_length * batch.violation
        loss, penalty = p3o_loss(batch.ratio, batch.adv_r, batch.adv_c, excess, self.rule.weight(),
                                 self.config.clip_epsilon)
        return loss, {"loss/p3o_penalty": penalty}
