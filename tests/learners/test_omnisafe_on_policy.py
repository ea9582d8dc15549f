"""The PPO family's first-order learners against OmniSafe 0.5, update for update (issue 61): GAE and
the buffer's advantage normalization, the Lagrange and PID multipliers, PPO's, PPO-Lag's, CPPO-PID's,
P3O's, FOCOPS's and CUP's losses and actor gradients, and whole updates with the KL early stop, on the
numbers ``benchmarks/omnisafe/on_policy.py`` recorded with OmniSafe's own classes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from crax.learners import CUP, FOCOPS, P3O, PPO, PPOPID, ConstrainedPPO, PPOCost, PPOLag
from crax.learners.on_policy.cup import projection_loss
from crax.learners.on_policy.family import IterationBatch, adam
from crax.learners.on_policy.trainer import gae, normalize_cost, standardize
from crax.learners.rules import PIDFields, lagrangian_adam, pid_init, pid_step
from crax.learners.shared.networks import gaussian_kl, gaussian_log_prob
from tests.learners.conftest import tiny
from tests.learners.omnisafe_data import load

DATA = load("on_policy")
T = 100  # the episode length crax's per-step violation is taken over: v = (J_c − d)/T
BOUND = 25.0  # OmniSafe's cost_limit
TOL = dict(rtol=2e-5, atol=2e-6)


def make(cls: type[ConstrainedPPO], params: dict[str, np.ndarray] | None = None, **overrides) -> ConstrainedPPO:
    """A crax learner with OmniSafe's tiny tanh actor (``params``: its torch parameters, loaded)."""
    config = cls.Config(activation="tanh", actor_std="parameter", normalize_observations=False, actor_hidden=(4,),
                        critic_hidden=(4,), entropy_cost=0.0, max_grad_norm=None, safety_bound=BOUND, num_envs=1,
                        batch_size=32, num_minibatches=1, unroll_length=1, **overrides)
    learner = cls(config, 3, 2, T, rngs=nnx.Rngs(0))
    if params is not None:
        layers = learner.actor.net.layers
        for i, layer in ((0, layers[0]), (2, layers[1])):
            layer.kernel[...] = jnp.asarray(params[f"mean.{i}.weight"]).T  # torch's Linear is (out, in)
            layer.bias[...] = jnp.asarray(params[f"mean.{i}.bias"])
        learner.actor.log_std[...] = jnp.asarray(params["log_std"])
    return learner


def actor_tree(learner: ConstrainedPPO) -> dict[str, np.ndarray]:
    """The crax actor's parameters under OmniSafe's names and layouts."""
    layers = learner.actor.net.layers
    return {"mean.0.weight": np.asarray(layers[0].kernel[...]).T, "mean.0.bias": np.asarray(layers[0].bias[...]),
            "mean.2.weight": np.asarray(layers[1].kernel[...]).T, "mean.2.bias": np.asarray(layers[1].bias[...]),
            "log_std": np.asarray(learner.actor.log_std[...])}


def actor_grad(learner: ConstrainedPPO, loss) -> tuple[float, dict[str, np.ndarray]]:
    """``loss(learner)``'s value and its gradient with respect to the actor, under OmniSafe's names."""
    value, grads = nnx.value_and_grad(loss, argnums=nnx.DiffState(0, nnx.Param))(learner)
    layers = grads["actor"]["net"]["layers"]
    return float(value), {
        "mean.0.weight": np.asarray(layers[0]["kernel"][...]).T, "mean.0.bias": np.asarray(layers[0]["bias"][...]),
        "mean.2.weight": np.asarray(layers[1]["kernel"][...]).T, "mean.2.bias": np.asarray(layers[1]["bias"][...]),
        "log_std": np.asarray(grads["actor"]["log_std"][...])}


def assert_trees(got: dict[str, np.ndarray], want: dict[str, np.ndarray], **tol) -> None:
    for name in want:
        np.testing.assert_allclose(got[name], want[name], err_msg=name, **(tol or TOL))


def minibatch(b: dict[str, np.ndarray], loc=None, scale=None) -> dict[str, jax.Array]:
    """The recorded batch as crax's samples; ``loc``/``scale`` (default: the recorded older policy's) are
    the reference policy of the per-state KL."""
    n = b["obs"].shape[0]
    return {"obs": jnp.asarray(b["obs"]), "u": jnp.asarray(b["act"]), "logp": jnp.asarray(b["logp"]),
            "loc": jnp.asarray(b["old_mean"] if loc is None else loc),
            "scale": jnp.asarray(b["old_std"] if scale is None else scale),
            "adv_r": jnp.asarray(b["adv_r"]), "adv_c": jnp.asarray(b["adv_c"]),
            "target_r": jnp.asarray(b["target_value_r"]), "target_c": jnp.asarray(b["target_value_c"])[:n]}


def violation(ep_cost: float) -> jax.Array:
    return jnp.asarray((ep_cost - BOUND) / T, jnp.float32)


# ---- GAE and the buffer ---------------------------------------------------------------------------

def buffer_gae(g: dict, signals: dict[str, jax.Array]) -> tuple[dict, dict]:
    """crax's GAE on the recorded buffer's paths (the first terminated, with last value 0; the others
    bootstrapped from the recorded last values) for the reward and cost ``signals``: advantages, targets."""
    lengths = g["lengths"].astype(int)
    ends = np.cumsum(lengths) - 1
    n = int(lengths.sum())
    dones = np.zeros(n, np.float32)
    dones[ends] = 1.0
    terminations = np.zeros(n, np.float32)
    terminations[ends[0]] = 1.0
    adv, targets = {}, {}
    for k in ("r", "c"):
        values = g[f"value_{k}"]
        nxt = np.concatenate([values[1:], [0.0]]).astype(np.float32)
        nxt[ends] = g[f"last_value_{k}"]
        adv[k], targets[k] = gae(jnp.asarray(signals[k]), jnp.asarray(values), jnp.asarray(nxt),
                                 jnp.asarray(terminations), jnp.asarray(dones), float(g["gamma"]),
                                 float(g[f"lam{'_c' if k == 'c' else ''}"]))
    return adv, targets


def test_gae_targets_and_normalized_advantages_match_omnisafes_buffer():
    g = DATA["gae"]
    adv, targets = buffer_gae(g, {"r": g["reward"], "c": g["cost"]})
    np.testing.assert_allclose(adv["r"], g["raw_adv_r"], **TOL)
    np.testing.assert_allclose(adv["c"], g["raw_adv_c"], **TOL)
    np.testing.assert_allclose(targets["r"], g["target_value_r"], **TOL)
    np.testing.assert_allclose(targets["c"], g["target_value_c"], **TOL)
    np.testing.assert_allclose(standardize(adv["r"]), g["adv_r"], **TOL)
    centred, scale = normalize_cost(adv["c"], "center")  # OmniSafe centres cost advantages, keeps their scale
    np.testing.assert_allclose(centred, g["adv_c"], **TOL)
    assert float(scale) == 1.0


def test_ppo_cost_trains_on_omnisafes_penalized_reward():
    # OmniSafe's buffer subtracts penalty_coef · cost from the reward before GAE: crax's ppo-cost hook
    g = DATA["gae_penalized"]
    learner = PPOCost(tiny(PPOCost.Config, cost_weight=float(g["penalty"])), 3, 2, 100, rngs=nnx.Rngs(0))
    reward = learner.training_reward(jnp.asarray(g["reward"]), jnp.asarray(g["cost"]))
    adv, targets = buffer_gae(g, {"r": reward, "c": g["cost"]})
    np.testing.assert_allclose(adv["r"], g["raw_adv_r"], **TOL)
    np.testing.assert_allclose(targets["r"], g["target_value_r"], **TOL)
    np.testing.assert_allclose(standardize(adv["r"]), g["adv_r"], **TOL)
    assert not np.allclose(g["raw_adv_r"], DATA["gae"]["raw_adv_r"])  # the penalty changed them


def test_each_budgeted_term_is_normalized_alone():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(512, 2)) * [1.0, 0.05] + [3.0, -0.2], jnp.float32)
    z = standardize(x)
    np.testing.assert_allclose(z.mean(axis=0), [0.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(z.std(axis=0), [1.0, 1.0], rtol=1e-4)
    centred, scale = normalize_cost(x, "center")
    np.testing.assert_allclose(centred.mean(axis=0), [0.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(centred.std(axis=0), x.std(axis=0), rtol=1e-5)  # each column keeps its own scale
    np.testing.assert_array_equal(scale, [1.0, 1.0])
    standardized, scale = normalize_cost(x, "standardize")
    np.testing.assert_allclose(standardized.std(axis=0), [1.0, 1.0], rtol=1e-4)
    np.testing.assert_allclose(scale, x.std(axis=0), rtol=1e-5)


# ---- the multipliers ------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["unbounded", "bounded"])
def test_lagrange_adam_matches_omnisafes_lagrange(case):
    rec = DATA["lagrange"][case]
    cfgs, costs = rec["cfgs"], DATA["lagrange"]["episode_costs"]
    bound = cfgs["lagrangian_upper_bound"]
    lam = jnp.asarray(cfgs["lagrangian_multiplier_init"], jnp.float32)
    state = optax.scale_by_adam(eps=1e-8).init(lam)
    learner = make(PPOLag, lambda_optimizer="adam", lambda_lr=float(cfgs["lambda_lr"]),
                   lambda_init=float(cfgs["lagrangian_multiplier_init"]), lambda_max=bound and float(bound))
    got, through_learner = [], []
    for jc in costs:
        lam, state = lagrangian_adam(lam, state, jnp.asarray(jc - cfgs["cost_limit"]), float(cfgs["lambda_lr"]),
                                     bound and float(bound))
        got.append(float(lam))
        learner.multiplier_update(violation(float(jc)))
        through_learner.append(float(learner.rule.lagrange[...]))
    np.testing.assert_allclose(got, rec["lagrange"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(through_learner, rec["lagrange"], rtol=1e-5, atol=1e-6)
    if bound is not None:
        assert max(got) == pytest.approx(float(bound)) and got[-1] < float(bound)  # the bound bites, then lets go


PID_FIELDS = dict(pid_kp="kp", pid_ki="ki", pid_kd="kd", pid_d_delay="d_delay", pid_delta_p_ema_alpha="p_ema",
                  pid_delta_d_ema_alpha="d_ema", sum_norm="sum_norm", diff_norm="diff_norm", penalty_max="lambda_max",
                  lagrangian_multiplier_init="lambda_init")


@pytest.mark.parametrize("case", ["default", "diff_norm", "penalty_max"])
def test_pid_lagrangian_matches_omnisafes(case):
    rec = DATA["pid"][case]
    cfgs = rec["cfgs"]
    fields = {ours: cfgs[theirs] for theirs, ours in PID_FIELDS.items()}
    fields = {k: (int(v) if k == "d_delay" else v if isinstance(v, bool) else float(v)) for k, v in fields.items()}
    gains = PIDFields(**fields)
    state = pid_init((), gains)
    learner = make(PPOPID, **fields)
    rows, lams = [], []
    for jc in DATA["pid"]["episode_costs"]:
        state = pid_step(state, jnp.asarray(jc), jnp.asarray(float(cfgs["cost_limit"])), gains)
        rows.append([float(state.lagrange), float(state.integral), float(state.p_ema), float(state.d_ema)])
        learner.multiplier_update(violation(float(jc)))
        lams.append(float(learner.rule.lagrange[...]))
    want = rec["lagrange_integral_p_d"]
    np.testing.assert_allclose(rows, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lams, want[:, 0], rtol=1e-4, atol=1e-5)
    if case == "penalty_max":
        assert np.sum(want[:, 0] == np.float32(cfgs["penalty_max"])) > 5  # the cap is active


# ---- the policy losses ----------------------------------------------------------------------------

LOSSES = DATA["losses"]


def ppo_loss(learner: ConstrainedPPO, mb: dict[str, jax.Array], v: jax.Array):
    return lambda m: m.ppo_loss(mb, v)[1]["loss/policy"]


def test_ppo_policy_loss_and_gradient_match_omnisafe():
    learner = make(PPO, LOSSES["params"], clip_epsilon=float(LOSSES["clip"]))
    loss, grad = actor_grad(learner, ppo_loss(learner, minibatch(LOSSES["batch"]), violation(BOUND)))
    assert loss == pytest.approx(float(LOSSES["ppo"]["loss"]), rel=1e-5)
    assert_trees(grad, LOSSES["ppo"]["grad"])


def test_ppo_lag_and_cppo_pid_mix_the_advantages_as_omnisafe():
    b = LOSSES["batch"]
    lag = make(PPOLag)
    lag.rule.lagrange[...] = jnp.asarray(LOSSES["ppo_lag"]["lagrange"])
    np.testing.assert_allclose(lag.advantage(b["adv_r"], b["adv_c"], violation(BOUND)), LOSSES["ppo_lag"]["adv"], **TOL)
    pid = make(PPOPID)
    pid.multiplier_update(violation(40.0))  # OmniSafe: pid_update(40) from a fresh controller
    assert float(pid.rule.lagrange[...]) == pytest.approx(float(LOSSES["cppo_pid"]["lagrange"]), rel=1e-5)
    np.testing.assert_allclose(pid.advantage(b["adv_r"], b["adv_c"], violation(BOUND)), LOSSES["cppo_pid"]["adv"],
                               **TOL)


@pytest.mark.parametrize("case", ["active", "inactive"])
def test_p3o_loss_and_gradient_match_omnisafe(case):
    rec = LOSSES["p3o"][case]
    learner = make(P3O, LOSSES["params"], clip_epsilon=float(LOSSES["clip"]), kappa_init=float(LOSSES["p3o"]["kappa"]),
                   kappa_max=float(LOSSES["p3o"]["kappa"]))
    loss, grad = actor_grad(learner, ppo_loss(learner, minibatch(LOSSES["batch"]), violation(float(rec["ep_cost"]))))
    assert loss == pytest.approx(float(rec["reward"]["loss"] + rec["cost"]["loss"]), rel=1e-5)
    assert_trees(grad, {k: rec["reward"]["grad"][k] + rec["cost"]["grad"][k] for k in rec["reward"]["grad"]})
    assert (float(rec["cost"]["loss"]) > 0) == (case == "active")


def test_focops_loss_is_the_per_state_form_where_omnisafe_broadcasts():
    """OmniSafe's ``FOCOPS._loss_pi`` keeps the KL's last axis (``sum(-1, keepdim=True)``: shape (n, 1))
    against ρÂ of shape (n,), so its loss is an (n, n) matrix whose mean is mean(m·KL) − mean(m)·mean(ρÂ)/λ_f:
    the mask scales the surrogate by the unmasked fraction instead of removing the masked states. crax
    keeps the per-state mask of the paper's reference code (docs/DECISIONS.md)."""
    rec = LOSSES["focops"]
    learner = make(FOCOPS, LOSSES["params"], focops_lambda=float(rec["lam"]), kl_delta=float(rec["eta"]))
    learner.rule.lagrange[...] = jnp.asarray(rec["nu"])
    mb = minibatch(LOSSES["batch"])
    v = violation(BOUND)
    adv = learner.advantage(mb["adv_r"], mb["adv_c"], v)
    np.testing.assert_allclose(adv, rec["adv"], **TOL)  # (Â_r − ν Â_c)/(1 + ν)

    def terms(m):
        loc, scale = m.policy(mb["obs"])
        ratio = jnp.exp(gaussian_log_prob(mb["u"], loc, scale) - mb["logp"])
        kl = gaussian_kl(loc, scale, mb["loc"], mb["scale"])
        return kl, ratio, jax.lax.stop_gradient((kl <= rec["eta"]).astype(jnp.float32))

    def omnisafe_form(m):
        kl, ratio, mask = terms(m)
        return jnp.mean((kl[:, None] - ratio * adv / rec["lam"]) * mask[:, None])

    loss, grad = actor_grad(learner, omnisafe_form)
    assert loss == pytest.approx(float(rec["loss"]), rel=1e-5)
    assert_trees(grad, rec["grad"])
    np.testing.assert_allclose(terms(learner)[0], rec["kl"], **TOL)

    _, metrics = learner.ppo_loss(mb, v)
    kl, ratio, mask = terms(learner)
    assert float(metrics["policy/trust_region_fraction"]) == pytest.approx(float(mask.mean()))
    assert 0 < float(mask.mean()) < 1
    assert float(metrics["loss/policy"]) == pytest.approx(float(jnp.mean((kl - ratio * adv / rec["lam"]) * mask)),
                                                          rel=1e-5)
    assert abs(float(metrics["loss/policy"]) - float(rec["loss"])) > 0.1


def test_cup_projection_loss_and_gradient_match_omnisafe():
    rec = LOSSES["cup"]
    learner = make(CUP, LOSSES["params"])
    b = LOSSES["batch"]
    mb = {"x": jnp.asarray(b["obs"]), "u": jnp.asarray(b["act"]), "logp": jnp.asarray(b["logp"]),
          "adv_c": jnp.asarray(b["adv_c"]), "perf_loc": jnp.asarray(b["old_mean"]), "perf_scale": jnp.asarray(b["old_std"])}
    gamma, lam = float(rec["gamma"]), float(rec["lam"])
    coef = (1.0 - gamma * lam) / (1.0 - gamma)
    loss, grad = actor_grad(learner, lambda m: projection_loss(m.actor, mb, jnp.asarray(rec["lagrange"]), coef)[0])
    assert loss == pytest.approx(float(rec["loss"]), rel=1e-5)
    assert_trees(grad, rec["grad"])


# ---- whole updates: epochs, Adam steps, the KL early stop -----------------------------------------

UPDATES = DATA["updates"]
UPDATE_TOL = dict(rtol=1e-4, atol=2e-6)


def run_update(cls: type[ConstrainedPPO], rec: dict, **overrides) -> tuple[ConstrainedPPO, dict[str, jax.Array]]:
    """One crax ``policy_update`` from OmniSafe's starting actor on the recorded batch (one minibatch, as
    the recorder's full-batch loader), after the multiplier step on the recorded episode cost if any."""
    learner = make(cls, rec["params"], learning_rate=float(rec["lr"]), num_epochs=int(rec["update_iters"]),
                   clip_epsilon=float(rec["clip"]), target_kl=float(rec["target_kl"]), **overrides)
    if "ep_cost" in rec:
        learner.multiplier_update(violation(float(rec["ep_cost"])))
    start = learner.policy(jnp.asarray(rec["batch"]["obs"]))  # OmniSafe's old distribution: the actor now
    samples = minibatch(rec["batch"], *start)
    optimizer = nnx.Optimizer(learner, adam(learner.config), wrt=nnx.Param)
    batch = IterationBatch(samples=samples, violation=violation(float(rec.get("ep_cost", BOUND))),
                           cost_scale=jnp.ones(()))
    return learner, learner.policy_update(optimizer, batch, jax.random.key(0))


def test_ppo_update_stops_at_omnisafes_kl_early_stop_with_its_parameters():
    rec = UPDATES["ppo"]
    learner, metrics = run_update(PPO, rec)
    assert int(metrics["policy/epochs"]) == int(rec["stop_iter"]) < int(rec["update_iters"])
    assert_trees(actor_tree(learner), rec["after"], **UPDATE_TOL)
    # without target_kl every epoch runs, and the policy moves further
    longer = make(PPO, rec["params"], learning_rate=float(rec["lr"]), num_epochs=int(rec["update_iters"]),
                  clip_epsilon=float(rec["clip"]))
    assert longer.config.target_kl is None
    samples = minibatch(rec["batch"], *longer.policy(jnp.asarray(rec["batch"]["obs"])))
    metrics = longer.policy_update(nnx.Optimizer(longer, adam(longer.config), wrt=nnx.Param),
                                   IterationBatch(samples, violation(BOUND), jnp.ones(())), jax.random.key(0))
    assert "policy/epochs" not in metrics and metrics["loss/policy"].shape == (int(rec["update_iters"]), 1)
    moved = np.abs(actor_tree(longer)["mean.2.bias"] - rec["params"]["mean.2.bias"])
    assert np.all(moved > np.abs(rec["after"]["mean.2.bias"] - rec["params"]["mean.2.bias"]))


def test_focops_update_matches_omnisafe_multiplier_epochs_and_parameters():
    rec = UPDATES["focops"]
    learner, metrics = run_update(FOCOPS, rec, focops_lambda=float(rec["focops_lam"]),
                                  kl_delta=float(rec["focops_eta"]))
    assert float(learner.rule.lagrange[...]) == pytest.approx(float(rec["lagrange"]), rel=1e-5)
    assert int(metrics["policy/epochs"]) == int(rec["stop_iter"]) < int(rec["update_iters"])
    assert_trees(actor_tree(learner), rec["after"], **UPDATE_TOL)


def test_cup_update_matches_omnisafe_two_stages():
    rec = UPDATES["cup"]
    learner, metrics = run_update(CUP, rec)
    assert float(learner.rule.lagrange[...]) == pytest.approx(float(rec["lagrange"]), rel=1e-5)
    assert int(metrics["cup/performance_epochs"]) == int(rec["stop_iter"])
    assert int(metrics["cup/projection_epochs"]) == int(rec["second_stop_iter"])
    assert_trees(actor_tree(learner), rec["after"], **UPDATE_TOL)


def test_first_order_defaults_are_omnisafes_yaml():
    focops, cup, p3o = FOCOPS.Config(), CUP.Config(), P3O.Config()
    want = UPDATES["focops"]["lagrange_cfgs"]
    for config, cfgs in ((focops, want), (cup, UPDATES["cup"]["lagrange_cfgs"])):
        assert (config.lambda_optimizer, config.lambda_lr, config.lambda_init, config.lambda_max) == (
            "adam", pytest.approx(float(cfgs["lambda_lr"])), pytest.approx(float(cfgs["lagrangian_multiplier_init"])),
            pytest.approx(float(cfgs["lagrangian_upper_bound"])))
    assert (focops.focops_lambda, focops.kl_delta, focops.target_kl) == (1.5, 0.02, 0.02)
    assert cup.target_kl == 0.01
    assert (p3o.kappa_init, p3o.kappa_factor) == (float(LOSSES["p3o"]["kappa"]), 1.0)
    assert PPO.Config().target_kl is None
