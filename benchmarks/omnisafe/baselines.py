"""Records what OmniSafe 0.5 computes for the on-policy baselines crax names after it (TRPO, TRPO-PID,
CPPO-PID, RCPO, PDO, IPO, the Saute, Simmer and early-terminated learners), for
``tests/learners/test_omnisafe_baselines.py``.

The updates are OmniSafe's own methods on a ``GaussianLearningActor`` (hidden [4], tanh, one action
dimension, so that a KL summed over action dimensions and one averaged over them agree) whose parameters
are recorded, and a fixed batch; the algorithm objects are made without an environment
(``object.__new__``) with their yaml's defaults and a logger stub. The multipliers are OmniSafe's
``Lagrange`` and ``PIDLagrangian`` stepped on a fixed sequence of episode costs. What depends on an env
(Saute's and Simmer's budget state, early termination) is OmniSafe's own adapter (``SauteAdapter``,
``SimmerAdapter`` with its ``SimmerPIDAgent``, ``EarlyTerminatedAdapter``) over a stub env that returns a
given cost each step and ends an episode by its time limit every ``T`` steps.

Run from the repository root with the OmniSafe environment (``common.py`` says how to make it)::

    /work/omnisafe-venv/bin/python benchmarks/omnisafe/baselines.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from common import on_policy_algorithm, policy_batch, save
from gymnasium import spaces
from omnisafe.adapter.early_terminated_adapter import EarlyTerminatedAdapter
from omnisafe.adapter.saute_adapter import SauteAdapter
from omnisafe.adapter.simmer_adapter import SimmerAdapter
from omnisafe.algorithms.on_policy.base.trpo import TRPO
from omnisafe.algorithms.on_policy.naive_lagrange.pdo import PDO
from omnisafe.algorithms.on_policy.naive_lagrange.rcpo import RCPO
from omnisafe.algorithms.on_policy.penalty_function.ipo import IPO
from omnisafe.algorithms.on_policy.pid_lagrange.cppo_pid import CPPOPID
from omnisafe.algorithms.on_policy.pid_lagrange.trpo_pid import TRPOPID
from omnisafe.common.lagrange import Lagrange
from omnisafe.common.pid_lagrange import PIDLagrangian
from omnisafe.common.simmer_agent import SimmerPIDAgent
from omnisafe.models.actor.gaussian_learning_actor import GaussianLearningActor
from omnisafe.utils.config import get_default_kwargs_yaml
from omnisafe.utils.tools import get_flat_params_from, set_param_values_to_model

OBS, ACT, N, HIDDEN = 3, 1, 32, [4]
LIMIT = 25.0
EP_COSTS = [40.0, 38.0, 35.0, 31.0, 28.0, 26.0, 24.0, 22.0, 21.0, 23.0, 27.0, 30.0, 26.0, 20.0]
"""The episode costs the multipliers and Simmer's controller step on, one per update (above the limit, then below)."""
IPO_COSTS = [5.0, 24.9, 24.99999, 25.0, 30.0]
"""Episode costs IPO's penalty is taken at: far below the limit, near it (κ/(d − J) passes penalty_max), over it."""


def make_actor() -> GaussianLearningActor:
    torch.manual_seed(0)
    box = lambda n: spaces.Box(-1.0, 1.0, (n,), np.float32)  # noqa: E731
    actor = GaussianLearningActor(box(OBS), box(ACT), HIDDEN, activation="tanh")
    actor.log_std.data = torch.tensor([-0.3])
    return actor


def make_batch(actor: GaussianLearningActor) -> dict[str, torch.Tensor]:
    return policy_batch(actor, N, OBS, ACT, logp_noise=0.2)


def actor_update(algo, batch: dict[str, torch.Tensor], theta0: torch.Tensor) -> torch.Tensor:
    """The actor's parameters after OmniSafe's ``_update_actor`` from ``theta0`` (then set back)."""
    actor = algo._actor_critic.actor
    set_param_values_to_model(actor, theta0.clone())
    algo._update_actor(batch["obs"], batch["act"], batch["logp"], batch["adv_r"], batch["adv_c"])
    theta = get_flat_params_from(actor).detach().clone()
    set_param_values_to_model(actor, theta0.clone())
    return theta


def loss_and_grad(algo, batch: dict[str, torch.Tensor]) -> dict[str, Any]:
    """OmniSafe's ``_loss_pi`` on its ``_compute_adv_surrogate`` of the batch, and its gradient in the
    actor's parameters (flat, in ``named_parameters`` order)."""
    actor = algo._actor_critic.actor
    actor.zero_grad()
    adv = algo._compute_adv_surrogate(batch["adv_r"], batch["adv_c"])
    loss = algo._loss_pi(batch["obs"], batch["act"], batch["logp"], adv)
    loss.backward()
    grad = torch.cat([p.grad.reshape(-1) for p in actor.parameters()])
    return {"adv": adv, "loss": loss, "grad": grad}


def lagrange_sequence(yaml: str) -> tuple[Lagrange, list[float]]:
    """OmniSafe's ``Lagrange`` (the yaml's ``lagrange_cfgs``) stepped on ``EP_COSTS``: λ after each step."""
    lagrange = Lagrange(**get_default_kwargs_yaml(yaml, None, "on-policy").lagrange_cfgs)
    lambdas = []
    for jc in EP_COSTS:
        lagrange.update_lagrange_multiplier(jc)
        lambdas.append(lagrange.lagrangian_multiplier.item())
    return lagrange, lambdas


def pid_sequence(yaml: str) -> tuple[PIDLagrangian, list[float]]:
    """OmniSafe's ``PIDLagrangian`` (the yaml's ``lagrange_cfgs``) stepped on ``EP_COSTS``: λ after each step."""
    pid = PIDLagrangian(**get_default_kwargs_yaml(yaml, None, "on-policy").lagrange_cfgs)
    lambdas = []
    for jc in EP_COSTS:
        pid.pid_update(jc)
        lambdas.append(float(pid.lagrangian_multiplier))
    return pid, lambdas


def with_multiplier(cls: type, yaml: str, actor: Any,
                    sequence: Callable[[str], tuple[Any, list[float]]]) -> tuple[Any, list[float]]:
    """OmniSafe's ``cls`` (``yaml``'s defaults) holding the multiplier ``sequence(yaml)`` steps on ``EP_COSTS``
    (:func:`lagrange_sequence`, :func:`pid_sequence`), and λ after each step."""
    algo = on_policy_algorithm(cls, yaml, actor)
    algo._lagrange, lambdas = sequence(yaml)
    return algo, lambdas


class StubEnv:
    """The env under an OmniSafe adapter: one env, zero observations, reward 1 and the next of ``costs``
    each step, truncated every ``horizon`` steps (what OmniSafe's AutoReset then resets)."""

    num_envs = 1

    def __init__(self, costs: list[float], horizon: int):
        self.costs, self.horizon, self.t = list(costs), horizon, 0

    def reset(self, seed=None, options=None):
        return torch.zeros(1, OBS), {}

    def step(self, action):
        cost = self.costs[self.t]
        self.t += 1
        truncated = float(self.t % self.horizon == 0)
        return (torch.zeros(1, OBS), torch.ones(1), torch.tensor([cost]), torch.zeros(1), torch.tensor([truncated]),
                {})


def adapter(cls: type, yaml: str, costs: list[float], horizon: int, **algo_cfgs: float):
    """An OmniSafe adapter without an environment (its ``__init__`` makes a Safety-Gymnasium env): the
    yaml's config with ``max_ep_len`` = ``horizon`` and ``algo_cfgs``, the stub env under it."""
    cfgs = get_default_kwargs_yaml(yaml, None, "on-policy")
    cfgs.algo_cfgs.update({"max_ep_len": horizon, **algo_cfgs})
    ad = object.__new__(cls)
    ad._cfgs, ad._device, ad._env = cfgs, torch.device("cpu"), StubEnv(costs, horizon)
    return ad


def run_adapter(ad, steps: int) -> dict[str, list[float]]:
    """``steps`` steps of an adapter from its reset: reward, termination, truncation and (Saute's and
    Simmer's) the safety state it appends to the observation, after each step."""
    obs, _ = ad.reset()
    out: dict[str, list[float]] = {"reward": [], "terminated": [], "truncated": [], "z": [float(obs[0, -1])]}
    for _ in range(steps):
        obs, reward, _, terminated, truncated, _ = ad.step(torch.zeros(1, ACT))
        out["reward"].append(float(reward[0]))
        out["terminated"].append(float(terminated[0]))
        out["truncated"].append(float(truncated[0]))
        out["z"].append(float(obs[0, -1]))
    return out


def saute_cfgs(yaml: str) -> dict[str, float]:
    algo = get_default_kwargs_yaml(yaml, None, "on-policy").algo_cfgs
    return {"safety_budget": algo.safety_budget, "saute_gamma": algo.saute_gamma, "unsafe_reward": algo.unsafe_reward}


def record_saute() -> dict[str, Any]:
    """SauteAdapter (PPOSaute.yaml, saute_gamma 0.999; and at crax's ppo-saute discount 0.99) over two
    episodes of T = 20 steps whose costs spend the budget and go past it."""
    horizon = 20
    costs = [0.0, 2.0, 0.0, 3.0, 1.0, 4.0, 0.0, 5.0, 2.0, 3.0, 0.0, 4.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 1.0, 0.0] * 2
    runs = []
    for gamma in (0.999, 0.99):
        ad = adapter(SauteAdapter, "PPOSaute", costs, horizon, safety_budget=LIMIT, saute_gamma=gamma)
        ad._safety_budget = (LIMIT * (1 - gamma**horizon) / (1 - gamma) / horizon * torch.ones(1, 1))
        runs.append({"saute_gamma": gamma, "safety_budget": ad._safety_budget, **run_adapter(ad, len(costs))})
    return {"horizon": horizon, "costs": costs, "cfgs": saute_cfgs("PPOSaute"), "runs": runs}


SIMMER_GAINS = {"kp": 0.05, "ki": 0.01, "kd": 0.3, "polyak": 0.5}
SIMMER_COSTS = [40.0, 45.0, 12.0, 8.0, 5.0, 4.0, 18.0, 22.0, 14.0, 6.0, 3.0, 9.0, 16.0, 60.0]
"""Gains under which Simmer's controller moves far in a few updates (its yaml's hardly move it: K_p 5·10⁻⁴),
so that its action clip at ±1, its derivative term and its budget clip are exercised."""


def record_simmer(gains: dict[str, float] | None = None, ep_costs: list[float] = EP_COSTS) -> dict[str, Any]:
    """SimmerAdapter (PPOSimmerPID.yaml at T = 20, its ``control_cfgs`` updated with ``gains``): its
    ``control_budget`` (SimmerPIDAgent) on ``ep_costs`` from safety_budget 20 under upper_budget 25, the
    budget after each; then its steps over two episodes of costs at the last budget (the first episode
    starts at budget/upper, later ones at 1)."""
    horizon = 20
    costs = [0.0, 1.0, 0.0, 2.0, 1.0, 0.0, 3.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0] * 2
    ad = adapter(SimmerAdapter, "PPOSimmerPID", costs, horizon, safety_budget=20.0, upper_budget=LIMIT)
    cfgs = ad._cfgs
    cfgs.control_cfgs.update(gains or {})
    gamma = cfgs.algo_cfgs.saute_gamma
    in_units = lambda d: d * (1 - gamma**horizon) / (1 - gamma) / horizon  # noqa: E731
    ad._num_envs = 1
    ad._safety_budget = in_units(20.0) * torch.ones(1, 1)
    ad._upper_budget = in_units(LIMIT) * torch.ones(1, 1)
    ad._rel_safety_budget = ad._safety_budget / ad._upper_budget
    ad._controller = SimmerPIDAgent(cfgs=cfgs.control_cfgs, budget_bound=ad._upper_budget.cpu())
    budgets = []
    for jc in ep_costs:
        ad.control_budget(torch.as_tensor(jc, dtype=torch.float32))
        budgets.append(float(ad._safety_budget[0, 0]))
    return {"horizon": horizon, "safety_bound": 20.0, "upper_budget": LIMIT, "costs": costs,
            "cfgs": {**saute_cfgs("PPOSimmerPID"), **dict(cfgs.control_cfgs)}, "ep_costs": ep_costs,
            "budgets": budgets, "start_budget": in_units(20.0), "steps": run_adapter(ad, len(costs))}


def record_early_terminated() -> dict[str, Any]:
    """EarlyTerminatedAdapter (PPOEarlyTerminated.yaml, cost_limit 3 here) over three episodes of T = 10:
    the first ends by its time limit with 2 spent (which OmniSafe's adapter keeps), the second passes
    the limit, the third after its reset."""
    horizon, limit = 10, 3.0
    costs = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0,
             0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0,
             1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    ad = adapter(EarlyTerminatedAdapter, "PPOEarlyTerminated", costs, horizon, cost_limit=limit)
    ad._cost_limit = limit
    ad._cost_logger = torch.zeros(1)
    return {"horizon": horizon, "cost_limit": limit, "costs": costs, "steps": run_adapter(ad, len(costs))}


def main() -> None:
    actor = make_actor()
    batch = make_batch(actor)
    theta0 = get_flat_params_from(actor).detach().clone()
    layout = [{"name": n, "shape": list(p.shape)} for n, p in actor.named_parameters()]

    trpo = actor_update(on_policy_algorithm(TRPO, "TRPO", actor), batch, theta0)

    trpo_pid, pid_lambdas = with_multiplier(TRPOPID, "TRPOPID", actor, pid_sequence)
    trpo_pid_theta = actor_update(trpo_pid, batch, theta0)
    cppo_pid, cppo_lambdas = with_multiplier(CPPOPID, "CPPOPID", actor, pid_sequence)

    rcpo, rcpo_lambdas = with_multiplier(RCPO, "RCPO", actor, lagrange_sequence)
    rcpo_theta = actor_update(rcpo, batch, theta0)
    pdo, pdo_lambdas = with_multiplier(PDO, "PDO", actor, lagrange_sequence)

    ipo = []
    for jc in IPO_COSTS:
        algo = on_policy_algorithm(IPO, "IPO", actor, jc)
        rec = loss_and_grad(algo, batch)
        ipo.append({"ep_cost": jc, "penalty": algo._logger.stored["Misc/Penalty"], **rec})

    set_param_values_to_model(actor, theta0.clone())
    save("baselines", {
        "actor": {"obs": OBS, "act": ACT, "hidden": HIDDEN, "layout": layout, "theta": theta0},
        "batch": batch, "limit": LIMIT, "ep_costs": EP_COSTS,
        "trpo": {"theta": trpo, **loss_and_grad(on_policy_algorithm(TRPO, "TRPO", actor), batch)},
        "trpo_pid": {"lambdas": pid_lambdas, "theta": trpo_pid_theta, **loss_and_grad(trpo_pid, batch)},
        "cppo_pid": {"lambdas": cppo_lambdas, **loss_and_grad(cppo_pid, batch)},
        "rcpo": {"lambdas": rcpo_lambdas, "theta": rcpo_theta, **loss_and_grad(rcpo, batch)},
        "pdo": {"lambdas": pdo_lambdas, **loss_and_grad(pdo, batch)},
        "ipo": ipo,
        "saute": record_saute(),
        "simmer": record_simmer(),
        "simmer_fast": record_simmer(SIMMER_GAINS, SIMMER_COSTS),
        "early_terminated": record_early_terminated(),
    }, source="benchmarks/omnisafe/baselines.py")


if __name__ == "__main__":
    main()
