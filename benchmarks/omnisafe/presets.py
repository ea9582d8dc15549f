"""Writes crax's ``omnisafe`` presets (``crax/learners/presets/omnisafe/<learner>.toml``) from OmniSafe
0.5's own algorithm configs (its ``configs/on-policy/*.yaml`` and ``configs/off-policy/*.yaml``).

Run with crax's environment, pointing at an installed OmniSafe (the yaml files are all it reads)::

    .venv/bin/python benchmarks/omnisafe/presets.py --omnisafe /work/omnisafe-venv/lib/python3.10/site-packages/omnisafe

Each OmniSafe setting maps to a crax config field (:data:`ON_POLICY`, :data:`LAGRANGE`, :data:`PID` and
the algorithm's own in :data:`ALGORITHMS`); a setting crax cannot take as it is goes to the file's
``[notes]`` with what crax does instead. Only fields of the crax learner's config are written, and
every file is checked by ``crax.learners.presets.preset_values`` before it is written.

The batch layout: OmniSafe collects ``steps_per_epoch`` steps on ``vector_env_nums`` envs and takes
``update_iters`` passes of minibatches of ``batch_size`` (the last one short); crax takes
``num_minibatches = steps_per_epoch // batch_size`` equal minibatches (``unroll_length`` 1), so an
iteration is up to ``batch_size - 1`` steps shorter (OmniSafe's 20,000: crax's 19,968, 312 minibatches
of 64 against OmniSafe's 312 and one of 32).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
from typing import Any

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from crax.learners.presets import HERE, preset_values  # noqa: E402
from crax.runs.envs import learners  # noqa: E402

ALGORITHMS: dict[str, tuple[str, str, dict[str, str]]] = {
    # crax learner: (OmniSafe algorithm, its config folder, its own algo_cfgs keys -> crax fields)
    "ppo": ("PPO", "on-policy", {}),
    "ppo-lag": ("PPOLag", "on-policy", {}),
    "ppo-pid": ("CPPOPID", "on-policy", {}),
    "cppo-pid": ("CPPOPID", "on-policy", {}),
    "p3o": ("P3O", "on-policy", {"kappa": "kappa_init"}),
    "focops": ("FOCOPS", "on-policy", {"focops_eta": "kl_delta", "focops_lam": "focops_lambda"}),
    "cup": ("CUP", "on-policy", {}),
    "crpo": ("OnCRPO", "on-policy", {"distance": "distance"}),
    "trpo": ("TRPO", "on-policy", {}),
    "trpo-lag": ("TRPOLag", "on-policy", {}),
    "trpo-pid": ("TRPOPID", "on-policy", {}),
    "cpo": ("CPO", "on-policy", {}),
    "pcpo": ("PCPO", "on-policy", {}),
    "rcpo": ("RCPO", "on-policy", {}),
    "pdo": ("PDO", "on-policy", {}),
    "ipo": ("IPO", "on-policy", {"kappa": "kappa", "penalty_max": "penalty_max"}),
    "ppo-saute": ("PPOSaute", "on-policy", {"saute_gamma": "saute_discount", "unsafe_reward": "saute_penalty"}),
    "trpo-saute": ("TRPOSaute", "on-policy", {"saute_gamma": "saute_discount", "unsafe_reward": "saute_penalty"}),
    "ppo-simmer-pid": ("PPOSimmerPID", "on-policy", {}),
    "trpo-simmer-pid": ("TRPOSimmerPID", "on-policy", {}),
    "ppo-early-terminated": ("PPOEarlyTerminated", "on-policy", {}),
    "trpo-early-terminated": ("TRPOEarlyTerminated", "on-policy", {}),
    "ddpg": ("DDPG", "off-policy", {}),
    "ddpg-lag": ("DDPGLag", "off-policy", {}),
    "ddpg-pid": ("DDPGPID", "off-policy", {}),
    "td3": ("TD3", "off-policy", {}),
    "td3-lag": ("TD3Lag", "off-policy", {}),
    "td3-pid": ("TD3PID", "off-policy", {}),
    "sac": ("SAC", "off-policy", {}),
    "sac-lag": ("SACLag", "off-policy", {}),
    "sac-pid": ("SACPID", "off-policy", {}),
}
"""The crax learners that have an OmniSafe counterpart, and the counterpart's own settings."""

TRUST_REGION = {"trpo", "trpo-lag", "trpo-pid", "cpo", "pcpo", "crpo", "rcpo", "trpo-saute", "trpo-simmer-pid",
                "trpo-early-terminated"}
"""Learners whose actor steps by natural gradient: OmniSafe's actor lr is unused, ``learning_rate`` is the critics'."""

LAGRANGE = {"lagrangian_multiplier_init": "lambda_init", "lambda_lr": "lambda_lr",
            "lagrangian_upper_bound": "lambda_max"}
"""OmniSafe's ``Lagrange`` settings -> crax's LagrangianFields (``lambda_optimizer`` is mapped by name)."""

PID = {"pid_kp": "kp", "pid_ki": "ki", "pid_kd": "kd", "pid_d_delay": "d_delay", "pid_delta_p_ema_alpha": "p_ema",
       "pid_delta_d_ema_alpha": "d_ema", "sum_norm": "sum_norm", "diff_norm": "diff_norm",
       "penalty_max": "lambda_max", "lagrangian_multiplier_init": "lambda_init"}
"""OmniSafe's ``PIDLagrangian`` settings -> crax's PIDFields."""


def on_policy_fields(cfg: dict[str, Any], learner: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The crax fields of an OmniSafe on-policy config's shared settings, and notes on what differs."""
    train, algo, model = cfg["train_cfgs"], cfg["algo_cfgs"], cfg["model_cfgs"]
    notes: dict[str, str] = {}
    steps, minibatch = algo["steps_per_epoch"], algo["batch_size"]
    f: dict[str, Any] = {
        "total_steps": train["total_steps"], "num_envs": train["vector_env_nums"], "unroll_length": 1,
        "batch_size": minibatch, "num_minibatches": steps // minibatch, "num_epochs": algo["update_iters"],
        "desync_episodes": False, "entropy_cost": algo["entropy_coef"],
        "normalize_observations": algo["obs_normalize"], "observation_clip": 5.0,
        "discounting": algo["gamma"], "gae_lambda": algo["lam"], "value_loss_coef": 1.0,
        "max_grad_norm": algo["max_grad_norm"] if algo["use_max_grad_norm"] else None, "grad_clip": "per-network",
        "critic_l2": algo["critic_norm_coef"] if algo["use_critic_norm"] else 0.0,
        "cost_advantage": "center" if algo["standardized_cost_adv"] else "none",
        "activation": model["actor"]["activation"], "actor_hidden": model["actor"]["hidden_sizes"],
        "critic_hidden": model["critic"]["hidden_sizes"], "actor_std": "parameter", "action_squash": "clip",
        "lr_decay": "linear" if model.get("linear_lr_decay") else "none",
        "cost_signal": "episodes", "cost_window": cfg["logger_cfgs"]["window_lens"],
        "reward_scaling": 1.0,
    }
    if steps % minibatch:
        notes["layout"] = (f"OmniSafe's epoch of {steps} steps in minibatches of {minibatch} ends with one of "
                           f"{steps % minibatch}; crax's iteration is {steps // minibatch * minibatch} steps in "
                           f"{steps // minibatch} equal minibatches")
    if "clip" in algo:
        f["clip_epsilon"] = algo["clip"]
    if learner in TRUST_REGION:
        f["target_kl"] = algo["target_kl"]
        f["cg_iterations"] = algo["cg_iters"]
        f["cg_damping"] = algo["cg_damping"]
        f["learning_rate"] = model["critic"]["lr"]
        if algo.get("fvp_sample_freq", 1) != 1:
            notes["fvp_sample_freq"] = "OmniSafe's Fisher on every k-th state; crax's on every state"
    else:
        f["target_kl"] = algo["target_kl"] if algo["kl_early_stop"] else None
        f["learning_rate"] = model["actor"]["lr"]
        f["critic_learning_rate"] = model["critic"]["lr"]
    if algo["gamma"] != algo["cost_gamma"] or algo["lam"] != algo["lam_c"]:
        notes["cost_gamma"] = "crax discounts costs as rewards (gamma, lam); OmniSafe's cost_gamma/lam_c differ"
    if not algo["standardized_rew_adv"]:
        notes["standardized_rew_adv"] = "crax always standardizes reward advantages"
    if algo["reward_normalize"] or algo["cost_normalize"]:
        notes["reward_normalize"] = ("OmniSafe normalizes rewards/costs by a running return estimate; crax does "
                                     "not (reward_scaling 1)")
    if algo.get("penalty_coef", 0.0):
        notes["penalty_coef"] = "OmniSafe subtracts penalty_coef · cost from the reward; crax does not here"
    if model["actor_type"] != "gaussian_learning":
        notes["actor_type"] = f"OmniSafe's {model['actor_type']}; crax's Gaussian with a learned log-std"
    notes["weight_initialization_mode"] = (f"OmniSafe's {model['weight_initialization_mode']}; crax's Flax defaults "
                                           "(LeCun normal kernels, zero biases)")
    notes["obs_normalize"] = ("OmniSafe updates its observation statistics every step before acting; crax once per "
                              "iteration, after the rollout")
    notes["entropy"] = "OmniSafe's entropy bonus is a mean over action dimensions, crax's a sum (0 here)"
    lag = cfg.get("lagrange_cfgs", {})
    if "cost_limit" in lag or "cost_limit" in algo:
        f["safety_bound"] = lag.get("cost_limit", algo.get("cost_limit"))
    table = PID if "pid_kp" in lag else LAGRANGE
    for key, field in table.items():
        if lag.get(key) is not None:
            f[field] = lag[key]
    if "lambda_optimizer" in lag and "pid_kp" not in lag:
        f["lambda_optimizer"] = lag["lambda_optimizer"].lower()
    return f, notes


def multiplier_fields(lag: dict[str, Any]) -> dict[str, Any]:
    """crax's multiplier fields from OmniSafe's ``lagrange_cfgs`` (the Lagrange or the PID controller's)."""
    pid = "pid_kp" in lag
    f = {field: lag[key] for key, field in (PID if pid else LAGRANGE).items() if lag.get(key) is not None}
    if "cost_limit" in lag:
        f["safety_bound"] = lag["cost_limit"]
    if "lambda_optimizer" in lag and not pid:
        f["lambda_optimizer"] = lag["lambda_optimizer"].lower()
    return f


def off_policy_fields(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The crax fields of an OmniSafe off-policy config (a yaml's ``defaults`` or one env's section over
    them), and notes on what differs."""
    train, algo, model = cfg["train_cfgs"], cfg["algo_cfgs"], cfg["model_cfgs"]
    notes: dict[str, str] = {}
    f: dict[str, Any] = {
        "total_steps": train["total_steps"], "num_envs": train["vector_env_nums"],
        "unroll_length": algo["update_cycle"], "updates_per_iteration": algo["update_iters"],
        "buffer_size": algo["size"], "batch_size": algo["batch_size"], "learning_starts": algo["start_learning_steps"],
        "normalize_observations": algo["obs_normalize"], "observation_clip": 5.0,
        "max_grad_norm": algo["max_grad_norm"], "tau": algo["polyak"], "discounting": algo["gamma"],
        "reward_scaling": 1.0, "desync_episodes": False, "n_step": 1,
        "actor_hidden": model["actor"]["hidden_sizes"], "critic_hidden": model["critic"]["hidden_sizes"],
        "activation": model["actor"]["activation"], "actor_learning_rate": model["actor"]["lr"],
        "critic_learning_rate": model["critic"]["lr"],
        "cost_signal": "episodes", "cost_window": cfg["logger_cfgs"]["window_lens"],
        # one OmniSafe epoch a compiled call (run settings: what an iteration computes is unchanged)
        "iterations_per_call": algo["steps_per_epoch"] // (train["vector_env_nums"] * algo["update_cycle"]),
    }
    f["checkpoint_every"] = 10 * f["iterations_per_call"]
    if model["actor_type"] == "mlp":  # DDPG and TD3: a deterministic actor
        f["policy_delay"] = algo["policy_delay"]
        if algo["use_exploration_noise"]:
            f["exploration_noise"] = algo["exploration_noise"]
        if model["critic"]["num_critics"] == 2:  # TD3's target smoothing
            f["target_noise"], f["noise_clip"] = algo["policy_noise"], algo["policy_noise_clip"]
    if "alpha" in algo:
        f["init_alpha"], f["auto_alpha"] = algo["alpha"], algo["auto_alpha"]
    f.update(multiplier_fields(cfg.get("lagrange_cfgs", {})))
    notes["iteration"] = ("an iteration is OmniSafe's update cycle: update_cycle env steps, update_iters gradient "
                          "steps and one multiplier step, as OmniSafe's _update takes them; a single MJX env on a "
                          "CPU makes it slow (raise num_envs and unroll_length, and updates_per_iteration with them)")
    if algo.get("warmup_epochs"):
        notes["warmup_epochs"] = f"OmniSafe holds λ for its first {algo['warmup_epochs']} epochs; crax does not"
    if algo["reward_normalize"] or algo["cost_normalize"]:
        notes["cost_normalize"] = "OmniSafe normalizes rewards/costs by a running estimate; crax does not"
    if algo.get("use_critic_norm"):
        notes["use_critic_norm"] = "OmniSafe adds an L2 penalty to the critics' loss; crax's off-policy critics have none"
    if model["actor_type"] == "mlp":
        notes["exploration"] = ("OmniSafe adds exploration noise to the squashed action and clips it; crax adds it "
                                "to the action before its tanh")
    notes["weight_initialization_mode"] = (f"OmniSafe's {model['weight_initialization_mode']}; crax's Flax defaults "
                                           "(LeCun normal kernels, zero biases)")
    if model["actor_type"] == "gaussian_sac":
        notes["actor_type"] = ("OmniSafe's SAC actor's scale is exp(clip(raw, −20, 2)); crax's softplus(raw + 0.5413) "
                               "+ 1e-3")
        if algo.get("policy_delay", 1) != 1:
            notes["policy_delay"] = "OmniSafe delays SAC's actor too; crax's SAC steps it every update"
    return {k: v for k, v in f.items() if v is not None}, notes


def deep_update(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over``'s entries laid over it, nested tables merged (OmniSafe's per-env sections)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = deep_update(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def write(learner: str, algorithm: str, folder: str, fields: dict[str, Any], notes: dict[str, str],
          omnisafe_version: str, per_env: dict[str, dict[str, Any]] | None = None) -> pathlib.Path:
    lines = [f"# OmniSafe {omnisafe_version}'s {algorithm} defaults (configs/{folder}/{algorithm}.yaml) as crax's "
             f"{learner} fields.", "# Written by benchmarks/omnisafe/presets.py; do not edit by hand.", "",
             "[source]", f'algorithm = "{algorithm}"', f'config = "configs/{folder}/{algorithm}.yaml"',
             f'omnisafe = "{omnisafe_version}"', "", "[fields]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in fields.items() if v is not None]
    for env_id, values in (per_env or {}).items():
        lines += ["", f'[env."{env_id}".fields]'] + [f"{k} = {toml_value(v)}" for k, v in values.items()]
    if notes:
        lines += ["", "[notes]"] + [f"{k} = {json.dumps(v)}" for k, v in notes.items()]
    path = HERE / "omnisafe" / f"{learner}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--omnisafe", required=True, type=pathlib.Path, help="the installed omnisafe package folder")
    args = parser.parse_args()
    version = (args.omnisafe / "version.py").read_text().split("__version__")[1].split("'")[1]
    table = learners()
    for learner, (algorithm, folder, own) in ALGORITHMS.items():
        if learner not in table:
            print(f"skip {learner}: not a crax learner (yet)")
            continue
        document = yaml.safe_load((args.omnisafe / "configs" / folder / f"{algorithm}.yaml").read_text())
        cfg = document["defaults"]
        known = {f.name for f in dataclasses.fields(table[learner].Config)}
        per_env: dict[str, dict[str, Any]] = {}
        if folder == "on-policy":
            fields, notes = on_policy_fields(cfg, learner)
            fields.update({crax: cfg["algo_cfgs"][key] for key, crax in own.items() if key in cfg["algo_cfgs"]})
            if learner == "p3o":  # OmniSafe's κ is fixed: crax's schedule from κ₀ to κ_max stays at κ₀
                fields["kappa_max"] = fields["kappa_init"]
        else:
            fields, notes = off_policy_fields(cfg)
            for env_id, section in document.items():
                if env_id != "defaults":
                    env_fields = off_policy_fields(deep_update(cfg, section))[0]
                    per_env[env_id] = {k: v for k, v in env_fields.items() if k in known and fields.get(k) != v}
        for name in sorted(set(fields) - known):
            value = fields.pop(name)
            if value is not None:
                notes.setdefault(name, f"OmniSafe sets {name} = {value!r}; crax's {learner} has no such field")
        path = write(learner, algorithm, folder, fields, notes, version, per_env)
        for env_id in (None, *per_env):
            preset_values("omnisafe", table[learner], env_id)
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
