"""PDO: primal-dual optimization, the Lagrangian vanilla policy gradient (OmniSafe's ``PDO``)."""

from __future__ import annotations

import dataclasses

import jax

from crax.learners.on_policy.family import ConstrainedPPO, PolicyBatch
from crax.learners.on_policy.losses import surrogate
from crax.learners.on_policy.omnisafe_defaults import OmniSafeLagrangeFields, OmniSafePPOConfig
from crax.learners.rules import LagrangianRule


@dataclasses.dataclass(frozen=True)
class PDOConfig(OmniSafeLagrangeFields, OmniSafePPOConfig):
    """PDO hyperparameters: OmniSafe's PPO-family defaults and its Lagrange rule (PDO.yaml: Adam on λ,
    lr 0.035, λ₀ 0.001). ``clip_epsilon`` is unused: the surrogate is not clipped."""


class PDO(ConstrainedPPO, name="pdo", config=PDOConfig, rule=LagrangianRule, budgets=True):
    """Minibatch epochs on the unclipped surrogate −mean(ρ · (Â_r − λ Â_c)/(1 + λ)) (OmniSafe's
    ``PolicyGradient._loss_pi``); λ stepped once per iteration before the update."""

    config: PDOConfig  # type: ignore[assignment]  # the instance of Config that __init__ stores

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        adv = self.advantage(batch.adv_r, batch.adv_c, batch.violation)
        return -surrogate(batch.ratio, adv), {}
