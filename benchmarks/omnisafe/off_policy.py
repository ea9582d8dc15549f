"""Records OmniSafe 0.5's off-policy updates (DDPG, TD3, SAC and their Lag and PID variants) on one fixed batch.

For each of DDPG, TD3 and SAC: OmniSafe's own ``ConstraintActorQCritic`` (tanh, hidden (8,), torch seed 0)
with its target networks moved off the online ones (so a test sees which network a target reads),
and, from OmniSafe's own methods on a batch of 16 transitions (3-dim obs, 2-dim action):

* ``reward_critic`` / ``cost_critic``: ``_update_reward_critic`` / ``_update_cost_critic``'s regression
  target, loss and gradient (the ``mse_loss`` OmniSafe calls is watched for its target), the noise it
  drew (TD3's ``randn_like``, SAC's ``rsample``), and the target cost critic's value at the online
  actor's deterministic next action (``next_q_c``: where crax's decision 68 clips);
* ``actor``: ``_loss_pi`` of the plain, Lag and PID classes at λ = 0.5 and its gradient;
* ``after_polyak``: the target networks after ``polyak_update``;
* ``update``: every network after one whole ``_update()`` of the Lag class (its actor due), with the
  noise it drew in order; SAC's with ``auto_alpha`` (log α and the α loss);
* ``lagrange`` / ``pid``: the multiplier after each of six ``update_lagrange_multiplier`` /
  ``pid_update`` calls on given mean episode costs, and the yamls' PID gains.

Run from the repository root: ``/work/omnisafe-venv/bin/python benchmarks/omnisafe/off_policy.py``.
"""

from __future__ import annotations

import copy
import pathlib
import sys
from typing import Any

import numpy as np
import torch
from gymnasium.spaces import Box

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from common import Logger, save  # noqa: E402
from omnisafe.algorithms.off_policy import (  # noqa: E402
    DDPG,
    DDPGPID,
    SAC,
    SACPID,
    TD3,
    TD3PID,
    DDPGLag,
    SACLag,
    TD3Lag,
)
from omnisafe.common.lagrange import Lagrange  # noqa: E402
from omnisafe.common.pid_lagrange import PIDLagrangian  # noqa: E402
from omnisafe.utils.config import get_default_kwargs_yaml  # noqa: E402

OBS, ACT, BATCH, HIDDEN = 3, 2, 16, [8]
LAMBDA = 0.5
"""The multiplier the actor losses are taken at."""
INIT_ALPHA = 0.5
"""SAC's temperature (auto-tuned) before the update."""
EPISODE_COSTS = [40.0, 30.0, 10.0, 26.0, 5.0, 60.0]
"""The mean episode costs the multiplier rules are fed, one per update (the bound is 25)."""
FAMILIES = {"ddpg": (DDPG, DDPGLag, DDPGPID), "td3": (TD3, TD3Lag, TD3PID), "sac": (SAC, SACLag, SACPID)}


class Env:
    observation_space = Box(-np.inf, np.inf, (OBS,), np.float32)
    action_space = Box(-1.0, 1.0, (ACT,), np.float32)


class Buffer:
    def __init__(self, batch: dict[str, torch.Tensor]):
        self.batch = batch

    def sample_batch(self) -> dict[str, torch.Tensor]:
        return self.batch


def linears(module: torch.nn.Module, grad: bool = False) -> list[dict[str, Any]]:
    """A network's layers, input layer first, as ``{"w": weight (out, in), "b": bias}`` (or their gradients)."""
    layers = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    return [{"w": (m.weight.grad if grad else m.weight).clone(), "b": (m.bias.grad if grad else m.bias).clone()}
            for m in layers]


def critics(critic: Any, grad: bool = False) -> dict[str, Any]:
    """The Q-networks of a ``QCritic`` by name: ``q1`` (and ``q2``)."""
    return {f"q{i + 1}": linears(net, grad) for i, net in enumerate(critic.net_lst)}


def networks(ac: Any) -> dict[str, Any]:
    """Every network of a ``ConstraintActorQCritic``."""
    return {"actor": linears(ac.actor), "reward_critic": critics(ac.reward_critic),
            "cost_critic": linears(ac.cost_critic.net_lst[0]), "target_actor": linears(ac.target_actor),
            "target_reward_critic": critics(ac.target_reward_critic),
            "target_cost_critic": linears(ac.target_cost_critic.net_lst[0])}


def grad_norm(module: torch.nn.Module) -> float:
    return float(torch.sqrt(sum((p.grad**2).sum() for p in module.parameters())))


def build(cls: type, batch: dict[str, torch.Tensor]) -> Any:
    """An algorithm object without an env: OmniSafe's own ``_init_model`` and ``_init`` on its yaml's
    defaults with tiny tanh networks, the targets then moved off the online networks."""
    cfgs = get_default_kwargs_yaml(cls.__name__, "", "off-policy")
    for part in (cfgs.model_cfgs.actor, cfgs.model_cfgs.critic):
        part.hidden_sizes, part.activation = HIDDEN, "tanh"
    cfgs.algo_cfgs.size = BATCH
    if cls in (SAC, SACLag, SACPID):
        cfgs.algo_cfgs.auto_alpha = True
    algo = object.__new__(cls)
    algo._cfgs, algo._env, algo._epochs, algo._device, algo._seed = cfgs, Env(), 1, "cpu", 0
    torch.manual_seed(0)
    algo._init_model()
    algo._init()
    if cfgs.algo_cfgs.get("auto_alpha"):  # α = 0.5, not OmniSafe's 1, so the α loss is not 0
        algo._log_alpha.data.fill_(float(np.log(INIT_ALPHA)))
    algo._logger, algo._buf, algo._epoch, algo._update_count = Logger(), Buffer(batch), 0, 0
    online = copy.deepcopy(algo._actor_critic)
    for seed in range(1, 100):  # the first seed whose next cost values show decision 68's clip and its absence
        torch.manual_seed(seed)
        ac = algo._actor_critic = copy.deepcopy(online)
        with torch.no_grad():
            for target in (ac.target_actor, ac.target_reward_critic, ac.target_cost_critic):
                for p in target.parameters():
                    p.add_(0.2 * torch.randn_like(p))
        live = next_cost_values(algo, batch)[batch["done"] == 0]
        if (live < -0.05).any() and (live > 0.05).any():
            return algo
    raise AssertionError("no seed moved the target cost critic to both signs")


def next_cost_values(algo: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """The target cost critic at the online actor's deterministic next action: what OmniSafe's cost
    target bootstraps from (``DDPG._update_cost_critic``)."""
    with torch.no_grad():
        ac, nxt = algo._actor_critic, batch["next_obs"]
        return ac.target_cost_critic(nxt, ac.actor.predict(nxt, deterministic=True))[0]


def last_linear(module: torch.nn.Module) -> torch.nn.Linear:
    return [m for m in module.modules() if isinstance(m, torch.nn.Linear)][-1]


class Watch:
    """Records, while active, the targets ``mse_loss`` is called with and the standard-normal draws of
    ``torch.randn_like`` (TD3's smoothing) and ``Normal.rsample`` (SAC's samples), in call order."""

    def __enter__(self) -> Watch:
        import torch.distributions.normal as normal

        self.targets: list[torch.Tensor] = []
        self.noise: list[torch.Tensor] = []
        self._saved = (torch.nn.functional.mse_loss, torch.randn_like, normal._standard_normal)
        mse, randn_like, standard = self._saved

        def mse_loss(input, target, *args, **kwargs):  # noqa: A002
            self.targets.append(target.detach().clone())
            return mse(input, target, *args, **kwargs)

        def watched_randn_like(x, *args, **kwargs):
            out = randn_like(x, *args, **kwargs)
            self.noise.append(out.detach().clone())
            return out

        def watched_standard(shape, dtype, device):
            out = standard(shape, dtype=dtype, device=device)
            self.noise.append(out.detach().clone())
            return out

        torch.nn.functional.mse_loss, torch.randn_like, normal._standard_normal = mse_loss, watched_randn_like, watched_standard
        return self

    def __exit__(self, *exc: Any) -> None:
        import torch.distributions.normal as normal

        torch.nn.functional.mse_loss, torch.randn_like, normal._standard_normal = self._saved


def fixed_batch() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    return {"obs": torch.randn(BATCH, OBS, generator=g), "act": torch.rand(BATCH, ACT, generator=g) * 2 - 1,
            "reward": torch.randn(BATCH, generator=g), "cost": (torch.rand(BATCH, generator=g) < 0.4).float(),
            "done": (torch.rand(BATCH, generator=g) < 0.25).float(), "next_obs": torch.randn(BATCH, OBS, generator=g)}


def critic_step(algo: Any, which: str, batch: dict[str, torch.Tensor]) -> dict[str, Any]:
    algo = copy.deepcopy(algo)
    b = batch
    torch.manual_seed(2)
    with Watch() as watch:
        if which == "reward":
            algo._update_reward_critic(b["obs"], b["act"], b["reward"], b["done"], b["next_obs"])
            module, key = algo._actor_critic.reward_critic, "Loss/Loss_reward_critic"
        else:
            algo._update_cost_critic(b["obs"], b["act"], b["cost"], b["done"], b["next_obs"])
            module, key = algo._actor_critic.cost_critic, "Loss/Loss_cost_critic"
    assert grad_norm(module) < algo._cfgs.algo_cfgs.max_grad_norm  # OmniSafe's clip left the gradient as it was
    assert len({id(t) for t in watch.targets}) == len(watch.targets) and all(
        torch.equal(t, watch.targets[0]) for t in watch.targets)  # the twins regress on one target
    out = {"target": watch.targets[0], "loss": algo._logger.stored[key], "noise": watch.noise}
    out["grad"] = critics(module, grad=True) if which == "reward" else linears(module.net_lst[0], grad=True)
    return out


def actor_losses(family: tuple[type, ...], base: Any, obs: torch.Tensor) -> dict[str, Any]:
    """``_loss_pi`` of the plain, Lag and PID classes on the same networks, at λ = LAMBDA for the last two."""
    out = {}
    for cls in family:
        algo = copy.deepcopy(base)
        if cls.__name__.endswith("Lag"):
            algo._lagrange = Lagrange(cost_limit=25.0, lagrangian_multiplier_init=LAMBDA, lambda_lr=0.01,
                                      lambda_optimizer="Adam")
        elif cls.__name__.endswith("PID"):
            cfg = get_default_kwargs_yaml(cls.__name__, "", "off-policy").lagrange_cfgs
            algo._lagrange = PIDLagrangian(**cfg)
            algo._lagrange._cost_penalty = LAMBDA
        torch.manual_seed(3)
        with Watch() as watch:
            loss = cls._loss_pi(algo, obs)
        algo._actor_critic.actor.zero_grad()
        loss.backward()
        out[cls.__name__] = {"loss": loss, "grad": linears(algo._actor_critic.actor, grad=True), "noise": watch.noise}
    return out


def whole_update(lag_cls: type, base: Any, batch: dict[str, torch.Tensor]) -> dict[str, Any]:
    """One ``_update()`` of the Lag class at λ = LAMBDA with the actor due (TD3's and SAC's delay 2:
    the update count is set so this is an even one); the multiplier left alone (epoch 0 ≤ warm-up).
    The target cost critic's last bias is raised by ``cost_shift`` first, so that no next cost value is
    negative and decision 68's clip leaves the update as OmniSafe's."""
    algo = copy.deepcopy(base)
    shift = float(np.ceil(10 * max(0.0, -float(next_cost_values(algo, batch).min()))) / 10 + 0.1)
    with torch.no_grad():
        last_linear(algo._actor_critic.target_cost_critic).bias.add_(shift)
    assert (next_cost_values(algo, batch) > 0).all()
    algo._lagrange = Lagrange(cost_limit=25.0, lagrangian_multiplier_init=LAMBDA, lambda_lr=0.01,
                              lambda_optimizer="Adam")
    algo._update_count = algo._cfgs.algo_cfgs.policy_delay - 1
    torch.manual_seed(4)
    with Watch() as watch:
        lag_cls._update(algo)
    out = {"cost_shift": shift, "after": networks(algo._actor_critic), "noise": watch.noise,
           "stored": algo._logger.stored}
    if hasattr(algo, "_log_alpha") and algo._cfgs.algo_cfgs.auto_alpha:
        out["log_alpha"] = algo._log_alpha.detach().clone()
    return out


def multipliers() -> dict[str, Any]:
    lag_cfg = dict(cost_limit=25.0, lagrangian_multiplier_init=0.001, lambda_lr=0.05, lambda_optimizer="Adam")
    lag = Lagrange(**lag_cfg)
    lag_values = []
    for jc in EPISODE_COSTS:
        lag.update_lagrange_multiplier(jc)
        lag_values.append(lag.lagrangian_multiplier.item())
    yaml = {name: dict(get_default_kwargs_yaml(name, "", "off-policy").lagrange_cfgs)
            for name in ("DDPGPID", "TD3PID", "SACPID")}
    pid_cfg = {**yaml["SACPID"], "pid_kp": 0.1, "pid_ki": 0.01, "pid_kd": 0.05, "pid_d_delay": 3}
    pid = PIDLagrangian(**pid_cfg)
    pid_values = []
    for jc in EPISODE_COSTS:
        pid.pid_update(jc)
        pid_values.append(pid.lagrangian_multiplier)
    return {"episode_costs": EPISODE_COSTS, "lagrange": {"config": lag_cfg, "values": lag_values},
            "pid": {"config": pid_cfg, "values": pid_values}, "pid_yaml": yaml,
            "lagrange_yaml": {name: dict(get_default_kwargs_yaml(name, "", "off-policy").lagrange_cfgs)
                              for name in ("DDPGLag", "TD3Lag", "SACLag")}}


def main() -> None:
    batch = fixed_batch()
    data: dict[str, Any] = {"batch": batch, "lambda": LAMBDA}
    for name, family in FAMILIES.items():
        base = build(family[1], batch)
        cfgs = base._cfgs.algo_cfgs
        record = {"networks": networks(base._actor_critic), "gamma": cfgs.gamma, "polyak": cfgs.polyak,
                  "lr": base._cfgs.model_cfgs.actor.lr, "critic_lr": base._cfgs.model_cfgs.critic.lr,
                  "policy_delay": cfgs.policy_delay}
        if name == "td3":
            record.update(policy_noise=cfgs.policy_noise, policy_noise_clip=cfgs.policy_noise_clip)
        if name == "sac":
            record["alpha"] = base._alpha
        record["reward_critic"] = critic_step(base, "reward", batch)
        record["cost_critic"] = critic_step(base, "cost", batch)
        record["next_q_c"] = next_cost_values(base, batch)
        record["actor"] = actor_losses(family, base, batch["obs"])
        polyak = copy.deepcopy(base)
        polyak._actor_critic.polyak_update(cfgs.polyak)
        record["after_polyak"] = networks(polyak._actor_critic)
        record["update"] = whole_update(family[1], base, batch)
        data[name] = record
    data["multipliers"] = multipliers()
    print(save("off_policy", data, source="benchmarks/omnisafe/off_policy.py"))


if __name__ == "__main__":
    main()
