"""Records OmniSafe 0.5's first-order on-policy updates (PPO, PPO-Lag, CPPO-PID, P3O, FOCOPS, CUP) on
small fixed inputs, for ``tests/learners/test_omnisafe_on_policy.py``.

Every number comes from OmniSafe's own classes and methods: ``OnPolicyBuffer`` (GAE, targets and
advantage normalization), ``Lagrange`` and ``PIDLagrangian`` (the multipliers), the algorithms'
``_loss_pi``/``_loss_pi_cost``/``_compute_adv_surrogate`` (losses and their gradients with respect
to a tiny ``GaussianLearningActor``), and their whole ``_update`` (epochs, Adam steps, the KL early
stop) on one full-batch minibatch, so that the data loader's shuffle does not matter. Run from the
repository root with the OmniSafe environment (``benchmarks/omnisafe/common.py``)::

    /work/omnisafe-venv/bin/python benchmarks/omnisafe/on_policy.py
"""

from __future__ import annotations

import math
import pathlib
import sys

import numpy as np
import torch
from gymnasium import spaces

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from common import Logger, save  # noqa: E402
from omnisafe.algorithms.on_policy.base.ppo import PPO  # noqa: E402
from omnisafe.algorithms.on_policy.first_order.cup import CUP  # noqa: E402
from omnisafe.algorithms.on_policy.first_order.focops import FOCOPS  # noqa: E402
from omnisafe.algorithms.on_policy.naive_lagrange.ppo_lag import PPOLag  # noqa: E402
from omnisafe.algorithms.on_policy.penalty_function.p3o import P3O  # noqa: E402
from omnisafe.algorithms.on_policy.pid_lagrange.cppo_pid import CPPOPID  # noqa: E402
from omnisafe.common.buffer import OnPolicyBuffer  # noqa: E402
from omnisafe.common.lagrange import Lagrange  # noqa: E402
from omnisafe.common.pid_lagrange import PIDLagrangian  # noqa: E402
from omnisafe.models.actor_critic.constraint_actor_critic import ConstraintActorCritic  # noqa: E402
from omnisafe.utils.config import get_default_kwargs_yaml  # noqa: E402

OBS, ACT, N = 3, 2, 32
OBS_SPACE = spaces.Box(-np.inf, np.inf, (OBS,), np.float32)
ACT_SPACE = spaces.Box(-1.0, 1.0, (ACT,), np.float32)
EPISODE_COSTS = [30.0, 35.0, 28.0, 26.0, 20.0, 18.0, 24.0, 40.0, 22.0, 10.0]
"""Mean episode costs J_c fed to the Lagrange multiplier, around the limit 25."""
PID_COSTS = [25.0 + 15.0 * math.sin(k / 3.0) + (7.0 if k % 4 == 0 else 0.0) for k in range(25)]
"""Mean episode costs fed to the PID Lagrangian: more updates than its d_delay (10)."""


def config(algo: str, **algo_cfgs):
    """The algorithm's default yaml config with a tiny tanh actor/critic and ``algo_cfgs`` overridden."""
    cfgs = get_default_kwargs_yaml(algo, "SafetyPointGoal1-v0", "on-policy")
    cfgs.model_cfgs.actor.hidden_sizes = [4]
    cfgs.model_cfgs.critic.hidden_sizes = [4]
    for key, value in algo_cfgs.items():
        setattr(cfgs.algo_cfgs, key, value)
    return cfgs


def algorithm(cls, cfgs, seed: int, ep_cost: float = 0.0):
    """An OmniSafe algorithm object without an env: its config, a seeded actor-critic, a logger stub."""
    torch.manual_seed(seed)
    algo = object.__new__(cls)
    algo._cfgs = cfgs
    algo._actor_critic = ConstraintActorCritic(OBS_SPACE, ACT_SPACE, cfgs.model_cfgs, epochs=1)
    algo._logger = Logger(ep_cost)
    return algo


def actor_params(actor) -> dict[str, np.ndarray]:
    """The GaussianLearningActor's parameters by torch name (``mean.0.weight`` is (out, in))."""
    return {name: p.detach().numpy().copy() for name, p in actor.named_parameters()}


def actor_grads(actor) -> dict[str, np.ndarray]:
    return {name: p.grad.detach().numpy().copy() for name, p in actor.named_parameters()}


def moved(actor, obs: torch.Tensor, spread: float, g: torch.Generator) -> torch.distributions.Normal:
    """The actor's distribution at ``obs`` with its parameters moved by ``spread`` × standard normal noise."""
    params = {name: p + spread * torch.randn(p.shape, generator=g) for name, p in actor.named_parameters()}
    return torch.func.functional_call(actor, params, (obs,))


def batch(seed: int, actor) -> dict[str, torch.Tensor]:
    """A fixed batch: observations, actions drawn near the actor's mean, the log-probabilities of an
    older policy (the actor with its parameters moved), so the ratios spread over PPO's clip range, and
    a nearer policy's mean and std (FOCOPS's and CUP's reference, whose per-state KLs straddle 0.02)."""
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(N, OBS, generator=g)
    with torch.no_grad():
        act = actor(obs).mean + torch.randn(N, ACT, generator=g)
        logp = moved(actor, obs, 0.35, g).log_prob(act).sum(-1)
        old_dist = moved(actor, obs, 0.06, g)
    adv_r = torch.randn(N, generator=g)
    adv_r = (adv_r - adv_r.mean()) / (adv_r.std(unbiased=False) + 1e-8)
    adv_c = 0.3 * torch.randn(N, generator=g) + 0.1
    adv_c = adv_c - adv_c.mean()
    target_r = torch.randn(N, generator=g)
    target_c = torch.rand(N, generator=g)
    return {"obs": obs, "act": act, "logp": logp, "adv_r": adv_r, "adv_c": adv_c, "target_value_r": target_r,
            "target_value_c": target_c, "old_mean": old_dist.mean, "old_std": old_dist.stddev}


def gae_and_buffer(penalty: float = 0.0) -> dict:
    """``OnPolicyBuffer``: three paths (a termination with last value 0, a truncation bootstrapped from
    a value, a path cut by the epoch's end bootstrapped likewise), then ``get()``'s normalized advantages;
    with ``penalty`` (OmniSafe's ``penalty_coef``) the rewards lose ``penalty · cost`` before GAE."""
    cfgs = config("PPOLag")
    g = torch.Generator().manual_seed(3)
    lengths, last_r, last_c = [5, 7, 4], [0.0, 1.7, -0.4], [0.0, 0.6, 0.25]
    size = sum(lengths)
    buf = OnPolicyBuffer(OBS_SPACE, ACT_SPACE, size, gamma=cfgs.algo_cfgs.gamma, lam=cfgs.algo_cfgs.lam,
                         lam_c=cfgs.algo_cfgs.lam_c, advantage_estimator="gae", penalty_coefficient=penalty,
                         standardized_adv_r=True, standardized_adv_c=True)
    reward, cost = torch.randn(size, generator=g), (torch.rand(size, generator=g) < 0.4).float()
    value_r, value_c = torch.randn(size, generator=g), torch.rand(size, generator=g)
    start = 0
    for length, lr, lc in zip(lengths, last_r, last_c, strict=True):
        for t in range(start, start + length):
            buf.store(obs=torch.zeros(OBS), act=torch.zeros(ACT), reward=reward[t], cost=cost[t],
                      value_r=value_r[t], value_c=value_c[t], logp=torch.tensor(0.0))
        buf.finish_path(torch.tensor([lr]), torch.tensor([lc]))
        start += length
    raw = {k: buf.data[k].clone() for k in ("adv_r", "adv_c")}
    data = buf.get()
    return {"gamma": cfgs.algo_cfgs.gamma, "lam": cfgs.algo_cfgs.lam, "lam_c": cfgs.algo_cfgs.lam_c, "penalty": penalty,
            "lengths": lengths, "last_value_r": last_r, "last_value_c": last_c, "reward": reward, "cost": cost,
            "value_r": value_r, "value_c": value_c, "raw_adv_r": raw["adv_r"], "raw_adv_c": raw["adv_c"],
            "adv_r": data["adv_r"], "adv_c": data["adv_c"], "target_value_r": data["target_value_r"],
            "target_value_c": data["target_value_c"]}


def lagrange() -> dict:
    """``Lagrange`` with PPOLag.yaml's lagrange_cfgs, unbounded and with an upper bound that binds."""
    out = {}
    for name, bound in (("unbounded", None), ("bounded", 0.15)):
        cfgs = config("PPOLag").lagrange_cfgs.todict()
        cfgs["lagrangian_upper_bound"] = bound
        lag = Lagrange(**cfgs)
        values = []
        for jc in EPISODE_COSTS:
            lag.update_lagrange_multiplier(jc)
            values.append(lag.lagrangian_multiplier.item())
        out[name] = {"cfgs": cfgs, "lagrange": values}
    out["episode_costs"] = EPISODE_COSTS
    return out


def pid() -> dict:
    """``PIDLagrangian`` with CPPOPID.yaml's lagrange_cfgs, then diff_norm, then neither norm (penalty_max)."""
    out = {}
    for name, change in (("default", {}), ("diff_norm", {"diff_norm": True}),
                         ("penalty_max", {"sum_norm": False, "penalty_max": 0.3})):
        cfgs = {**config("CPPOPID").lagrange_cfgs.todict(), **change}
        controller = PIDLagrangian(**cfgs)
        rows = []
        for jc in PID_COSTS:
            controller.pid_update(jc)
            rows.append([controller.lagrangian_multiplier, controller._pid_i, controller._delta_p,
                         controller._cost_d])
        out[name] = {"cfgs": cfgs, "lagrange_integral_p_d": rows}
    out["episode_costs"] = PID_COSTS
    return out


def loss_and_grad(algo, fn) -> dict:
    """``fn()``'s loss, and its gradient with respect to the actor's parameters."""
    algo._actor_critic.actor.zero_grad()
    loss = fn()
    loss.backward()
    return {"loss": loss.item(), "grad": actor_grads(algo._actor_critic.actor)}


def losses() -> dict:
    """The policy losses on one tiny actor and one batch: PPO's clipped surrogate, PPO-Lag's and CPPO-PID's
    mixed advantages, P3O's two terms, FOCOPS's and CUP's second stage, each with its actor gradient."""
    ppo = algorithm(PPO, config("PPO"), seed=7)
    actor = ppo._actor_critic.actor
    b = batch(11, actor)
    out = {"params": actor_params(actor), "batch": b, "clip": ppo._cfgs.algo_cfgs.clip}
    out["ppo"] = loss_and_grad(ppo, lambda: ppo._loss_pi(b["obs"], b["act"], b["logp"], b["adv_r"]))

    lag = object.__new__(PPOLag)
    lag._lagrange = Lagrange(**{**config("PPOLag").lagrange_cfgs.todict(), "lagrangian_multiplier_init": 0.8})
    out["ppo_lag"] = {"lagrange": 0.8, "adv": lag._compute_adv_surrogate(b["adv_r"], b["adv_c"])}
    pid_algo = object.__new__(CPPOPID)
    pid_algo._lagrange = PIDLagrangian(**config("CPPOPID").lagrange_cfgs.todict())
    pid_algo._lagrange.pid_update(40.0)
    out["cppo_pid"] = {"lagrange": pid_algo._lagrange.lagrangian_multiplier,
                       "adv": pid_algo._compute_adv_surrogate(b["adv_r"], b["adv_c"])}

    out["p3o"] = {}
    for name, ep_cost in (("active", 26.0), ("inactive", 20.0)):
        p3o = algorithm(P3O, config("P3O"), seed=7, ep_cost=ep_cost)
        reward = loss_and_grad(p3o, lambda: p3o._loss_pi(b["obs"], b["act"], b["logp"], b["adv_r"]))  # noqa: B023
        cost = loss_and_grad(p3o, lambda: p3o._loss_pi_cost(b["obs"], b["act"], b["logp"], b["adv_c"]))  # noqa: B023
        out["p3o"][name] = {"ep_cost": ep_cost, "reward": reward, "cost": cost}
    out["p3o"]["kappa"] = p3o._cfgs.algo_cfgs.kappa
    out["p3o"]["cost_limit"] = p3o._cfgs.algo_cfgs.cost_limit

    focops = algorithm(FOCOPS, config("FOCOPS"), seed=7)
    focops._lagrange = Lagrange(**{**config("FOCOPS").lagrange_cfgs.todict(), "lagrangian_multiplier_init": 0.6})
    focops._p_dist = torch.distributions.Normal(b["old_mean"], b["old_std"])
    adv = focops._compute_adv_surrogate(b["adv_r"], b["adv_c"]).detach()
    with torch.no_grad():
        kl = torch.distributions.kl_divergence(actor(b["obs"]), focops._p_dist).sum(-1)
    out["focops"] = {"nu": 0.6, "adv": adv, "lam": focops._cfgs.algo_cfgs.focops_lam,
                     "eta": focops._cfgs.algo_cfgs.focops_eta, "kl": kl,
                     **loss_and_grad(focops, lambda: focops._loss_pi(b["obs"], b["act"], b["logp"], adv))}

    cup = algorithm(CUP, config("CUP"), seed=7)
    cup._lagrange = Lagrange(**{**config("CUP").lagrange_cfgs.todict(), "lagrangian_multiplier_init": 0.7})
    cup._p_dist = torch.distributions.Normal(b["old_mean"], b["old_std"])
    out["cup"] = {"lagrange": 0.7, "gamma": cup._cfgs.algo_cfgs.gamma, "lam": cup._cfgs.algo_cfgs.lam,
                  **loss_and_grad(cup, lambda: cup._loss_pi_cost(b["obs"], b["act"], b["logp"], b["adv_c"]))}
    return out


class Buffer:
    """A buffer stub whose ``get()`` returns one fixed batch, as ``OnPolicyBuffer.get()`` returns the same
    data each time it is asked within an update."""

    def __init__(self, data: dict[str, torch.Tensor]):
        self.data = data

    def get(self) -> dict[str, torch.Tensor]:
        return dict(self.data)


def updates() -> dict:
    """Whole ``_update`` calls on one full-batch minibatch (``batch_size`` = N): PPO with its KL early
    stop, FOCOPS (the multiplier step first, then epochs with the early stop) and CUP (both stages):
    the actor's parameters before and after, the epochs run and the multiplier."""
    out = {}
    runs = (("ppo", PPO, dict(target_kl=0.012), None), ("focops", FOCOPS, dict(target_kl=0.012), 27.0),
            ("cup", CUP, dict(target_kl=0.004), 27.0))
    for name, cls, algo_cfgs, ep_cost in runs:
        cfgs = config(cls.__name__, batch_size=N, update_iters=8, **algo_cfgs)
        cfgs.model_cfgs.actor.lr = 0.01
        algo = algorithm(cls, cfgs, seed=5, ep_cost=ep_cost or 0.0)
        if ep_cost is not None:
            algo._lagrange = Lagrange(**cfgs.lagrange_cfgs)
        b = batch(13, algo._actor_critic.actor)
        before = actor_params(algo._actor_critic.actor)
        algo._buf = Buffer({k: v for k, v in b.items() if not k.startswith("old_")})
        algo._update()
        stats = dict(algo._logger.stored)
        record = {"params": before, "batch": b, "after": actor_params(algo._actor_critic.actor),
                  "target_kl": cfgs.algo_cfgs.target_kl, "update_iters": cfgs.algo_cfgs.update_iters,
                  "lr": cfgs.model_cfgs.actor.lr, "stop_iter": stats["Train/StopIter"],
                  "clip": cfgs.algo_cfgs.clip}
        if ep_cost is not None:
            record |= {"ep_cost": ep_cost, "lagrange": algo._lagrange.lagrangian_multiplier.item(),
                       "lagrange_cfgs": cfgs.lagrange_cfgs.todict()}
        if name == "focops":
            record |= {"focops_lam": cfgs.algo_cfgs.focops_lam, "focops_eta": cfgs.algo_cfgs.focops_eta}
        if name == "cup":
            record |= {"second_stop_iter": stats["Train/SecondStepStopIter"], "gamma": cfgs.algo_cfgs.gamma,
                       "lam": cfgs.algo_cfgs.lam}
        print(name, "stop", record["stop_iter"], record.get("second_stop_iter"))
        out[name] = record
    return out


if __name__ == "__main__":
    torch.set_default_dtype(torch.float32)
    path = save("on_policy", {"gae": gae_and_buffer(), "gae_penalized": gae_and_buffer(penalty=0.5),
                              "lagrange": lagrange(), "pid": pid(), "losses": losses(),
                              "updates": updates()}, source="benchmarks/omnisafe/on_policy.py")
    print(path, path.stat().st_size, "bytes")
