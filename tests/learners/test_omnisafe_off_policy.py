"""The off-policy learners (DDPG, TD3, SAC and their Lag and PID variants) against OmniSafe 0.5's own code.

``benchmarks/omnisafe/off_policy.py`` ran OmniSafe's algorithm classes on one fixed batch with tiny tanh
networks and recorded what they compute (``data/omnisafe/off_policy.json``). Each test loads OmniSafe's
parameters into a crax learner (torch's ``Linear.weight`` is the transpose of ``nnx.Linear.kernel``), feeds
it OmniSafe's standard-normal draws where a step samples, and compares. Kept differences, asserted here
(docs/DECISIONS.md 68 and 79): the cost target never bootstraps from a negative value; SAC's actor in
crax parametrizes its scale otherwise (the SAC tests swap in OmniSafe's form, :class:`OmniSafeSACActor`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import crax.learners.off_policy.sac as sac_module
import crax.learners.off_policy.td3 as td3_module
from crax.learners import (
    DDPG,
    DDPGPID,
    SAC,
    SACPID,
    TD3,
    TD3PID,
    DDPGLag,
    OffPolicyConfig,
    SACLag,
    TD3Lag,
)
from crax.learners.off_policy.ddpg_pid import DDPGPIDConfig
from crax.learners.off_policy.family import OffPolicyPIDFields, value_and_grad
from crax.learners.shared.networks import MLP
from tests.learners.omnisafe_data import load

DATA = load("off_policy")
FAMILIES = {"ddpg": (DDPG, DDPGLag, DDPGPID), "td3": (TD3, TD3Lag, TD3PID), "sac": (SAC, SACLag, SACPID)}
OBS, ACT, T = 3, 2, 1000


def close(actual, desired, err_msg: str = "", rtol: float = 2e-5, atol: float = 2e-6) -> None:
    """Equal to float32 rounding (the default tolerance: one float32 step of OmniSafe's numbers)."""
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired), rtol=rtol, atol=atol, err_msg=err_msg)


class OmniSafeSACActor(nnx.Module):
    """OmniSafe's ``GaussianSACActor``: one MLP to [loc, log σ], σ = exp(clip(log σ, −20, 2))."""

    def __init__(self, rngs: nnx.Rngs):
        self.net = MLP(OBS, (8,), 2 * ACT, rngs=rngs, activation="tanh")

    def __call__(self, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        loc, log_std = jnp.split(self.net(x), 2, axis=-1)
        return loc, jnp.exp(jnp.clip(log_std, -20.0, 2.0))


def set_mlp(mlp: MLP, layers: list[dict[str, np.ndarray]]) -> None:
    """OmniSafe's ``{"w": (out, in), "b"}`` layers into a crax MLP (its kernel is (in, out))."""
    for layer, rec in zip(mlp.layers, layers, strict=True):
        assert layer.bias is not None
        layer.kernel[...] = jnp.asarray(rec["w"].T)
        layer.bias[...] = jnp.asarray(rec["b"])


def set_critics(critics, rewards: dict[str, list], cost: list) -> None:
    set_mlp(critics.reward_q1, rewards["q1"])
    if "q2" in rewards:
        set_mlp(critics.reward_q2, rewards["q2"])
    set_mlp(critics.cost_q, cost)


def assert_mlp(mlp: MLP, layers: list[dict[str, np.ndarray]], what: str, rtol: float = 2e-5,
               atol: float = 2e-6) -> None:
    """A crax MLP's parameters (or gradients put in their place) equal OmniSafe's layers."""
    for i, (layer, rec) in enumerate(zip(mlp.layers, layers, strict=True)):
        assert layer.bias is not None
        close(layer.kernel[...], rec["w"].T, f"{what} layer {i} kernel", rtol, atol)
        close(layer.bias[...], rec["b"], f"{what} layer {i} bias", rtol, atol)


def actor_net(learner) -> MLP:
    return learner.actor.net


def make(cls, family: str, **overrides):
    """``cls`` with OmniSafe's hyperparameters and networks (the targets OmniSafe's moved-off copies), at λ = 0.5."""
    rec = DATA[family]
    fields = dict(actor_hidden=(8,), critic_hidden=(8,), activation="tanh", normalize_observations=False,
                  discounting=float(rec["gamma"]), tau=float(rec["polyak"]),
                  actor_learning_rate=float(rec["lr"]), critic_learning_rate=float(rec["critic_lr"]))
    if family == "td3":
        fields.update(target_noise=float(rec["policy_noise"]), noise_clip=float(rec["policy_noise_clip"]),
                      policy_delay=int(rec["policy_delay"]))
    if family == "sac":
        fields["init_alpha"] = float(rec["alpha"])
    learner = cls(cls.Config(**{**fields, **overrides}), OBS, ACT, T, rngs=nnx.Rngs(0))
    if family == "sac":
        learner.actor = OmniSafeSACActor(nnx.Rngs(0))
    nets = rec["networks"]
    set_mlp(actor_net(learner), nets["actor"])
    set_critics(learner.critics, nets["reward_critic"], nets["cost_critic"])
    set_critics(learner.target_critics, nets["target_reward_critic"], nets["target_cost_critic"])
    if hasattr(learner, "target_actor"):
        set_mlp(learner.target_actor.net, nets["target_actor"])
    if learner.rule is not None:
        learner.rule.lagrange[...] = jnp.full_like(learner.rule.lagrange[...], float(DATA["lambda"]))
    return learner


def batch(family: str) -> dict[str, jax.Array]:
    b = DATA["batch"]
    return {"obs": jnp.asarray(b["obs"]), "action": jnp.asarray(b["act"]), "reward": jnp.asarray(b["reward"]),
            "cost": jnp.asarray(b["cost"]), "next_obs": jnp.asarray(b["next_obs"]),
            "discount": jnp.asarray(DATA[family]["gamma"] * (1.0 - b["done"]), jnp.float32)}


def feed(monkeypatch, keys: list[jax.Array], draws) -> set[int]:
    """crax's standard-normal draws replaced by OmniSafe's recorded ones: the draw made with ``keys[i]``
    is ``draws[i]`` (so each sampling site must use its own key, as OmniSafe's draws are separate);
    returns the set of the indices drawn."""
    table = {tuple(np.asarray(jax.random.key_data(k)).ravel()): i for i, k in enumerate(keys)}
    assert len(draws) <= len(keys)
    used: set[int] = set()

    def standard_normal(key, shape):
        i = table[tuple(np.asarray(jax.random.key_data(key)).ravel())]  # a KeyError: a draw OmniSafe did not make
        used.add(i)
        out = np.asarray(draws[i])
        assert out.shape == tuple(shape), (out.shape, shape)
        return jnp.asarray(out)

    monkeypatch.setattr(sac_module, "standard_normal", standard_normal)
    monkeypatch.setattr(td3_module, "standard_normal", standard_normal)
    return used


@pytest.mark.parametrize("family", FAMILIES)
def test_critic_targets_match_omnisafe_but_the_cost_target_clips_negative_values(family, monkeypatch):
    """y_r is OmniSafe's (DDPG: at the online actor; TD3: the target actor with OmniSafe's clipped
    smoothing noise; SAC: a sample with −α log π); y_c bootstraps, as OmniSafe's does for all three,
    at the online actor's deterministic action, clipped at 0 (decision 68): OmniSafe's where its next
    cost value is ≥ 0, and c alone where it is negative."""
    rec, learner, b = DATA[family], make(FAMILIES[family][1], family), batch(family)
    key = jax.random.key(0)
    used = feed(monkeypatch, [key], rec["reward_critic"]["noise"])
    y_r, y_c = learner.targets(b, key)
    assert used == set(range(len(rec["reward_critic"]["noise"])))  # TD3 and SAC drew once, DDPG never
    close(y_r, rec["reward_critic"]["target"])

    omnisafe_y_c, next_q_c = rec["cost_critic"]["target"], rec["next_q_c"]
    close(y_c[:, 0], b["cost"] + b["discount"] * np.maximum(next_q_c, 0.0))
    kept = next_q_c >= 0
    close(y_c[kept, 0], omnisafe_y_c[kept])
    clipped = (next_q_c < 0) & (np.asarray(b["discount"]) > 0)
    assert clipped.any()  # the batch shows the difference
    close(y_c[clipped, 0], b["cost"][clipped])
    assert np.all(y_c[clipped, 0] > omnisafe_y_c[clipped] + 1e-3)


@pytest.mark.parametrize("family", FAMILIES)
def test_critic_losses_and_gradients_match_omnisafe_on_its_targets(family):
    """crax's critic loss on OmniSafe's targets: the reward loss (summed over the twins), the cost
    loss and their gradients with respect to every critic parameter."""
    rec, learner, b = DATA[family], make(FAMILIES[family][1], family), batch(family)
    y_r, y_c = jnp.asarray(rec["reward_critic"]["target"]), jnp.asarray(rec["cost_critic"]["target"])[:, None]
    (_, metrics), grads = value_and_grad(learner.critic_loss, learner.critics, b["obs"], b["action"], y_r, y_c)
    close(metrics["loss/critic_reward"], rec["reward_critic"]["loss"])
    close(metrics["loss/critic_cost"], rec["cost_critic"]["loss"])
    nnx.update(learner.critics, grads)  # the gradient in the critics' shape, to read it layer by layer
    for name, layers in rec["reward_critic"]["grad"].items():
        assert_mlp(getattr(learner.critics, f"reward_{name}"), layers, f"reward {name} gradient")
    assert_mlp(learner.critics.cost_q, rec["cost_critic"]["grad"], "cost gradient")


@pytest.mark.parametrize(("family", "variant"), [(f, i) for f in FAMILIES for i in range(3)],
                         ids=lambda x: x if isinstance(x, str) else ["plain", "lag", "pid"][x])
def test_actor_loss_and_gradient_match_omnisafe(family, variant, monkeypatch):
    """``_loss_pi`` of OmniSafe's plain, Lag and PID classes at λ = 0.5 and its gradient with respect to
    the actor: −Q_r (DDPG, TD3: the first twin), α log π − min Q_r (SAC), and with a multiplier
    (−Q_r + λ Q_c)/(1 + λ), SAC's entropy term inside the division."""
    cls = FAMILIES[family][variant]
    rec = DATA[family]["actor"][cls.__name__.replace("-", "")]
    learner = make(cls, family)
    key = jax.random.key(0)
    used = feed(monkeypatch, [key], rec["noise"])
    (loss, _), grads = value_and_grad(learner.actor_loss, learner.actor, jnp.asarray(DATA["batch"]["obs"]), key)
    assert used == set(range(len(rec["noise"])))
    close(loss, rec["loss"])
    nnx.update(learner.actor, grads)
    assert_mlp(actor_net(learner), rec["grad"], "actor gradient")


@pytest.mark.parametrize("family", FAMILIES)
def test_the_soft_target_update_matches_omnisafes_polyak_update(family):
    learner = make(FAMILIES[family][0], family)
    learner.update_targets()
    rec = DATA[family]["after_polyak"]
    for name, layers in rec["target_reward_critic"].items():
        assert_mlp(getattr(learner.target_critics, f"reward_{name}"), layers, f"target reward {name}")
    assert_mlp(learner.target_critics.cost_q, rec["target_cost_critic"], "target cost")
    if family == "td3":  # DDPG's and SAC's targets read no target actor (OmniSafe's moves one it never reads)
        assert_mlp(learner.target_actor.net, rec["target_actor"], "target actor")


@pytest.mark.parametrize("family", FAMILIES)
def test_one_whole_update_matches_omnisafes_update(family, monkeypatch):
    """One ``update`` of the Lag learner (critics, the actor due, SAC's temperature, the targets) against
    OmniSafe's ``_update()``: every network after it, its losses, and SAC's log α. OmniSafe's draws in
    order (TD3: the smoothing; SAC: the target's sample, the actor's, the temperature's) are crax's
    with the update's three keys in order. The recorder raised the target cost critic's bias so that no
    next cost value is negative (decision 68's clip is the targets test's)."""
    rec = DATA[family]["update"]
    learner = make(FAMILIES[family][1], family)
    bias = learner.target_critics.cost_q.layers[-1].bias
    bias[...] = bias[...] + float(rec["cost_shift"])
    optimizers = learner.optimizers()
    key = jax.random.key(0)
    used = feed(monkeypatch, list(jax.random.split(key, 3)), rec["noise"])  # update's k_target, k_actor, k_extra
    with jax.disable_jit():  # lax.cond runs the due branch alone, on concrete keys
        metrics = learner.update(optimizers, batch(family), key, jnp.asarray(0))
    assert used == set(range(len(rec["noise"])))
    stored = rec["stored"]
    close(metrics["loss/critic_cost"], stored["Loss/Loss_cost_critic"])
    close(metrics["loss/actor"], stored["Loss/Loss_pi"])
    # OmniSafe's reward loss sums the twins' mean squared errors, as crax's does
    close(metrics["loss/critic_reward"], stored["Loss/Loss_reward_critic"])
    after = rec["after"]
    assert_mlp(actor_net(learner), after["actor"], "actor")
    for prefix, critics in (("", learner.critics), ("target_", learner.target_critics)):
        for name, layers in after[f"{prefix}reward_critic"].items():
            assert_mlp(getattr(critics, f"reward_{name}"), layers, f"{prefix}reward {name}")
        assert_mlp(critics.cost_q, after[f"{prefix}cost_critic"], f"{prefix}cost")
    if family == "td3":
        assert_mlp(learner.target_actor.net, after["target_actor"], "target actor")
    if family == "sac":
        close(metrics["loss/alpha"], stored["Loss/alpha_loss"])
        close(learner.temperature.log_alpha[...], rec["log_alpha"][0])


@pytest.mark.parametrize("cls", [DDPGLag, TD3Lag, SACLag], ids=lambda c: c.name)
def test_the_lagrangian_rule_with_adam_steps_lambda_as_omnisafes_lagrange(cls):
    """``lambda_optimizer="adam"`` on v = (J − d)/T: OmniSafe's ``update_lagrange_multiplier(J)`` step for step."""
    rec = DATA["multipliers"]
    cfg = rec["lagrange"]["config"]
    learner = cls(cls.Config(lambda_optimizer="adam", lambda_lr=float(cfg["lambda_lr"]),
                             lambda_init=float(cfg["lagrangian_multiplier_init"]),
                             safety_bound=float(cfg["cost_limit"])), OBS, ACT, T, rngs=nnx.Rngs(0))
    for jc, want in zip(rec["episode_costs"], rec["lagrange"]["values"], strict=True):
        learner.multiplier_update(jnp.asarray((jc - cfg["cost_limit"]) / T, jnp.float32))
        np.testing.assert_allclose(learner.multipliers()["lagrange"], want, rtol=1e-5)


@pytest.mark.parametrize("cls", [DDPGPID, TD3PID, SACPID], ids=lambda c: c.name)
def test_the_pid_rule_steps_lambda_as_omnisafes_pid_lagrangian(cls):
    rec = DATA["multipliers"]
    cfg = rec["pid"]["config"]
    config = cls.Config(kp=float(cfg["pid_kp"]), ki=float(cfg["pid_ki"]), kd=float(cfg["pid_kd"]),
                        d_delay=int(cfg["pid_d_delay"]), p_ema=float(cfg["pid_delta_p_ema_alpha"]),
                        d_ema=float(cfg["pid_delta_d_ema_alpha"]), lambda_init=float(cfg["lagrangian_multiplier_init"]),
                        lambda_max=float(cfg["penalty_max"]), safety_bound=float(cfg["cost_limit"]))
    learner = cls(config, OBS, ACT, T, rngs=nnx.Rngs(0))
    values = []
    for jc in rec["episode_costs"]:
        learner.multiplier_update(jnp.asarray((jc - cfg["cost_limit"]) / T, jnp.float32))
        values.append(float(learner.multipliers()["lagrange"]))
    np.testing.assert_allclose(values, rec["pid"]["values"], rtol=1e-4, atol=1e-6)


def test_the_off_policy_pid_defaults_are_omnisafes_yamls_in_crax_units():
    """Decision 79: K_p, K_d, the EMAs, the delay and the clip as OmniSafe's SACPID/TD3PID/DDPGPID yamls;
    K_i × the env steps of one default iteration (OmniSafe steps its PID every env step); I₀ per yaml."""
    yaml = DATA["multipliers"]["pid_yaml"]
    steps = OffPolicyConfig().steps_per_iteration
    assert steps == 1024
    for name, config in (("SACPID", SACPID.Config()), ("TD3PID", TD3PID.Config()), ("DDPGPID", DDPGPIDConfig())):
        y = yaml[name]
        assert isinstance(config, OffPolicyPIDFields)
        assert config.kp == pytest.approx(y["pid_kp"]) and config.kd == pytest.approx(y["pid_kd"])
        assert config.ki == pytest.approx(y["pid_ki"] * steps, rel=0.03), name
        assert (config.d_delay, config.p_ema, config.d_ema) == (y["pid_d_delay"], y["pid_delta_p_ema_alpha"],
                                                                y["pid_delta_d_ema_alpha"])
        assert (config.sum_norm, config.diff_norm, config.lambda_max) == (y["sum_norm"], y["diff_norm"],
                                                                          y["penalty_max"])
        assert config.lambda_init == pytest.approx(y["lagrangian_multiplier_init"]), name
