"""Records OmniSafe 0.5's trust-region actor updates on one tiny fixed batch, for
``tests/learners/test_omnisafe_trust_region.py``.

Each update is OmniSafe's own ``_update_actor`` (``NaturalPG``, ``TRPO``, ``TRPOLag`` with a given λ,
``CPO`` in each of its cases, ``PCPO``, ``OnCRPO`` on each side of its tolerance) on a
``GaussianLearningActor`` (hidden [4], tanh) whose parameters are recorded; the algorithm objects are
made without an environment (``object.__new__``) with their yaml's defaults, the actor in a bare
``nn.Module`` as ``_actor_critic`` and a logger stub that keeps what the update stores. Spies on
``conjugate_gradients`` and the line searches record x = H⁻¹g, p = H⁻¹b and the directions searched.

Where crax deliberately differs (docs/DECISIONS.md, decision 78), the recorder also runs OmniSafe's
own line search (``CPO._cpo_search_step``) on the direction with the difference removed: CPO's
``_step_direction`` with r = gᵀH⁻¹b negated (the paper's r is taken along the loss gradient), and
PCPO's step with x = H⁻¹g in place of OmniSafe's H·x.

Run from the repository root with the OmniSafe environment (``common.py`` says how to make it)::

    /work/omnisafe-venv/bin/python benchmarks/omnisafe/trust_region.py
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from common import on_policy_algorithm, policy_batch, save
from gymnasium import spaces
from omnisafe.algorithms.on_policy.base import natural_pg, trpo
from omnisafe.algorithms.on_policy.base.natural_pg import NaturalPG
from omnisafe.algorithms.on_policy.base.trpo import TRPO
from omnisafe.algorithms.on_policy.naive_lagrange.trpo_lag import TRPOLag
from omnisafe.algorithms.on_policy.primal.crpo import OnCRPO
from omnisafe.algorithms.on_policy.second_order import cpo, pcpo
from omnisafe.algorithms.on_policy.second_order.cpo import CPO
from omnisafe.algorithms.on_policy.second_order.pcpo import PCPO
from omnisafe.common.lagrange import Lagrange
from omnisafe.models.actor.gaussian_learning_actor import GaussianLearningActor
from omnisafe.utils.config import get_default_kwargs_yaml
from omnisafe.utils.math import conjugate_gradients
from omnisafe.utils.tools import get_flat_params_from, set_param_values_to_model

OBS, ACT, N, HIDDEN = 3, 2, 32, [4]
LIMIT = 25.0
TRPO_LAG_LAMBDA = 0.7


CG_CALLS: list[tuple[torch.Tensor, torch.Tensor]] = []
"""(right-hand side, solution) of every conjugate-gradient solve since the list was last cleared."""


def spy_conjugate_gradients(fvp, b, num_steps=10, **kw):
    x = conjugate_gradients(fvp, b, num_steps, **kw)
    CG_CALLS.append((b.detach().clone(), x.detach().clone()))
    return x


for module in (natural_pg, trpo, cpo, pcpo):
    module.conjugate_gradients = spy_conjugate_gradients


def make_actor() -> GaussianLearningActor:
    torch.manual_seed(0)
    box = lambda n: spaces.Box(-1.0, 1.0, (n,), np.float32)  # noqa: E731
    actor = GaussianLearningActor(box(OBS), box(ACT), HIDDEN, activation="tanh")
    actor.log_std.data = torch.tensor([-0.3, 0.2])
    return actor


def make_batch(actor: GaussianLearningActor) -> dict[str, torch.Tensor]:
    return policy_batch(actor, N, OBS, ACT, logp_noise=0.05)


def run_update(algo, batch: dict[str, torch.Tensor], theta0: torch.Tensor) -> dict[str, Any]:
    """OmniSafe's ``_update_actor`` from ``theta0`` on the batch: the new parameters, what it stored,
    and x = H⁻¹g (and p = H⁻¹b where it solves for it) from the CG spy."""
    actor = algo._actor_critic.actor
    set_param_values_to_model(actor, theta0.clone())
    CG_CALLS.clear()
    algo._update_actor(batch["obs"], batch["act"], batch["logp"], batch["adv_r"], batch["adv_c"])
    out = {"theta": get_flat_params_from(actor).detach().clone(), "g": CG_CALLS[0][0], "x": CG_CALLS[0][1],
           **{k.split("/")[-1]: v for k, v in algo._logger.stored.items()}}
    if len(CG_CALLS) > 1:
        out.update(b=CG_CALLS[1][0], p=CG_CALLS[1][1])
    set_param_values_to_model(actor, theta0.clone())
    return out


def searched(algo, batch: dict[str, torch.Tensor], theta0: torch.Tensor, direction: torch.Tensor, c: float,
             case: int, total_steps: int) -> dict[str, Any]:
    """OmniSafe's own CPO line search (``_cpo_search_step``) along ``direction`` from ``theta0``."""
    actor = algo._actor_critic.actor
    set_param_values_to_model(actor, theta0.clone())
    with torch.no_grad():
        p_dist = actor(batch["obs"])
        reward_before = algo._loss_pi(batch["obs"], batch["act"], batch["logp"], batch["adv_r"])
        cost_before = algo._loss_pi_cost(batch["obs"], batch["act"], batch["logp"], batch["adv_c"])
    step, accepted = algo._cpo_search_step(
        step_direction=direction, grads=torch.zeros_like(direction), p_dist=p_dist, obs=batch["obs"],
        act=batch["act"], logp=batch["logp"], adv_r=batch["adv_r"], adv_c=batch["adv_c"],
        loss_reward_before=reward_before, loss_cost_before=cost_before, total_steps=total_steps,
        violation_c=c, optim_case=case)
    return {"direction": direction, "theta": theta0 + step, "AcceptanceStep": accepted}


def record_cpo(actor, batch, theta0) -> list[dict[str, Any]]:
    """CPO in each case: c (EpCost − limit) set from OmniSafe's own s and r on this batch so that the
    cases 3, 2, 1, 0 occur, and case 1 again with the cost advantages negated (r < 0); beside each,
    OmniSafe's step direction and line search with r negated."""
    probe = run_update(on_policy_algorithm(CPO, "CPO", actor, LIMIT), batch, theta0)
    delta = 0.01
    reach = math.sqrt(2 * delta * probe["s"])  # the most bᵀΔθ can fall inside the trust region
    alpha = math.sqrt(2 * delta / probe["q"])
    assert probe["r"] > 0, "the batch should make reward and cost rise together"
    negated = {**batch, "adv_c": -batch["adv_c"]}
    runs = [(3, -2.0 * reach, batch), (2, -0.5 * alpha * probe["r"], batch), (1, 0.5 * reach, batch),
            (0, 2.0 * reach, batch), (1, 0.5 * reach, negated)]
    records = []
    for case, c, data in runs:
        algo = on_policy_algorithm(CPO, "CPO", actor, LIMIT + c)
        rec = run_update(algo, data, theta0)
        assert rec["OptimCase"] == case, (case, rec["OptimCase"])
        c_used = algo._logger.ep_cost - LIMIT
        q, r, s = (torch.as_tensor(rec[k]) for k in ("q", "r", "s"))
        A, B = q - r**2 / (s + 1e-8), 2 * delta - c_used**2 / (s + 1e-8)
        direction, lam, nu = algo._step_direction(optim_case=case, xHx=q, x=rec["x"], A=A, B=B, q=q, p=rec["p"],
                                                  r=-r, s=s, ep_costs=c_used)
        corrected = searched(algo, data, theta0, direction, c_used, case, total_steps=20)
        records.append({**rec, "c": c_used, "cost_sign": 1.0 if data is batch else -1.0,
                        "r_negated": {**corrected, "Lambda_star": lam, "Nu_star": nu}})
    return records


def record_pcpo(actor, batch, theta0) -> list[dict[str, Any]]:
    """PCPO with the reward step inside the linearized constraint and with it projected; beside each,
    OmniSafe's line search on the step with x = H⁻¹g in place of OmniSafe's H·x."""
    probe = run_update(on_policy_algorithm(PCPO, "PCPO", actor, LIMIT), batch, theta0)
    delta = 0.01
    alpha = math.sqrt(2 * delta / probe["q"])
    records = []
    for c in (-2.0 * alpha * probe["r"], -0.5 * alpha * probe["r"]):
        algo = on_policy_algorithm(PCPO, "PCPO", actor, LIMIT + c)
        rec = run_update(algo, batch, theta0)
        c_used = algo._logger.ep_cost - LIMIT
        q, r, s = (torch.as_tensor(rec[k]) for k in ("q", "r", "s"))
        projection = torch.clamp_min((torch.sqrt(2 * delta / q) * r + c_used) / s, 0.0)
        direction = torch.sqrt(2 * delta / (q + 1e-8)) * rec["x"] - projection * rec["p"]
        corrected = searched(algo, batch, theta0, direction, c_used, case=0, total_steps=200)
        records.append({**rec, "c": c_used, "projection": projection, "x_not_hx": corrected})
    return records


def main() -> None:
    actor = make_actor()
    batch = make_batch(actor)
    theta0 = get_flat_params_from(actor).detach().clone()
    layout = [{"name": n, "shape": list(p.shape)} for n, p in actor.named_parameters()]

    trpo_lag = on_policy_algorithm(TRPOLag, "TRPOLag", actor)
    trpo_lag._lagrange = Lagrange(**trpo_lag._cfgs.lagrange_cfgs)
    trpo_lag._lagrange.lagrangian_multiplier.data.fill_(TRPO_LAG_LAMBDA)

    crpo = []
    for c in (1.0, 3.0):  # within and past OnCRPO's distance (2) over the limit
        algo = on_policy_algorithm(OnCRPO, "OnCRPO", actor, LIMIT + c)
        algo._rew_update = algo._cost_update = 0
        rec = run_update(algo, batch, theta0)
        crpo.append({**rec, "c": c, "cost_update": algo._cost_update})

    cfgs = {name: get_default_kwargs_yaml(name, None, "on-policy").algo_cfgs
            for name in ("NaturalPG", "TRPO", "TRPOLag", "CPO", "PCPO", "OnCRPO")}
    data = {
        "settings": {name: {k: c[k] for k in ("target_kl", "cg_damping", "cg_iters", "fvp_sample_freq")}
                     for name, c in cfgs.items()} | {"OnCRPO_distance": cfgs["OnCRPO"].distance,
                                                     "cost_limit": LIMIT, "trpo_lag_lambda": TRPO_LAG_LAMBDA},
        "layout": layout,
        "theta0": theta0,
        "batch": batch,
        "natural_pg": run_update(on_policy_algorithm(NaturalPG, "NaturalPG", actor), batch, theta0),
        "trpo": run_update(on_policy_algorithm(TRPO, "TRPO", actor), batch, theta0),
        "trpo_lag": run_update(trpo_lag, batch, theta0),
        "cpo": record_cpo(actor, batch, theta0),
        "pcpo": record_pcpo(actor, batch, theta0),
        "crpo": crpo,
    }
    print(save("trust_region", data, source="benchmarks/omnisafe/trust_region.py"))


if __name__ == "__main__":
    main()
