"""WCSAC (``wcsac``, crax/learners/off_policy/wcsac.py): the Gaussian CVaR Γ = Q_c + α⁻¹ φ(Φ⁻¹(α)) √V_c on
hand numbers and against a large Gaussian sample, the second-moment target and the 2-Wasserstein variance
loss on hand-made transitions, a variance that is never negative, the learner's targets and actor
objective through its networks, and training on the toy env by name."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax import runs
from crax.cli.train import parse_learner_command
from crax.learners import WCSAC, SACLag, make_trainer
from crax.learners.off_policy.losses import (
    VARIANCE_FLOOR,
    cvar_coefficient,
    gaussian_cvar,
    nonnegative_variance,
    variance_loss,
    variance_target,
)
from crax.learners.off_policy.sac import squashed_sample
from crax.learners.shared import risk
from crax.plugins.manager import registry
from crax.runs.envs import learners
from tests.learners.conftest import TOY_ENV_ID
from tests.learners.test_losses_off_policy import f32
from tests.learners.test_off_policy import LEARN, batch, learner, params, small
from tests.learners.toy_env import ToyEnv

# ---- the Gaussian CVaR -------------------------------------------------------------------------------


def test_the_cvar_coefficient_is_phi_of_the_quantile_over_alpha():
    assert float(cvar_coefficient(1.0)) == 0.0  # φ(Φ⁻¹(1)) = φ(∞) = 0: the mean
    assert float(cvar_coefficient(0.1)) == pytest.approx(1.7550, abs=1e-4)  # φ(−1.28155)/0.1 = 0.175498/0.1
    assert float(cvar_coefficient(0.5)) == pytest.approx(np.sqrt(2.0 / np.pi), rel=1e-6)  # φ(0)/0.5
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"risk level must lie in \(0, 1\]"):
            cvar_coefficient(bad)


def test_gaussian_cvar_is_the_mean_at_alpha_one_and_mu_plus_1_755_sigma_at_a_tenth():
    mean, variance = f32([[0.0], [3.0], [10.0]]), f32([[1.0], [4.0], [0.25]])  # σ 1, 2, 0.5
    np.testing.assert_array_equal(gaussian_cvar(mean, variance, 1.0), mean)
    np.testing.assert_allclose(gaussian_cvar(mean, variance, 0.1), [[1.7550], [3.0 + 3.5100], [10.0 + 0.8775]],
                               atol=2e-4)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_gaussian_cvar_matches_the_cvar_of_a_large_gaussian_sample(alpha):
    mu, sigma = 3.0, 2.0
    sample = mu + sigma * jax.random.normal(jax.random.key(0), (400_000,))
    empirical = float(risk.cvar(sample, alpha))  # the mean of the sample's worst α fraction
    closed = float(gaussian_cvar(f32(mu), f32(sigma**2), alpha))
    assert closed == pytest.approx(empirical, abs=0.02)


# ---- the variance critic's target and loss ------------------------------------------------------------------


def test_the_variance_target_is_the_second_moment_bellman_equation_by_hand():
    cost, discount = f32([1.0, 2.0, 1.0, 0.5]), f32([0.9, 0.0, 0.0, 0.5])  # transitions 2 and 3 terminated
    next_q, next_v = f32([[2.0], [5.0], [5.0], [-3.0]]), f32([[0.5], [7.0], [7.0], [2.0]])
    q = f32([[1.5], [1.0], [1.5], [0.25]])
    y = variance_target(cost, discount, next_q, next_v, q)
    want = [
        1.0 + 2 * 0.9 * 1.0 * 2.0 + 0.81 * 0.5 + 0.81 * 4.0 - 1.5**2,  # c² + 2γcQ' + γ²V' + γ²Q'² − Q² = 5.995
        2.0**2 - 1.0**2,  # done: the bootstrap drops, c² − Q² = 3
        VARIANCE_FLOOR,  # done with c² − Q² = 1 − 2.25 < 0: a variance is never negative
        0.5**2 + 0.25 * 2.0 - 0.25**2,  # Q' = −3 enters as max(Q', 0) = 0, as in the cost target: c² + d²V' − Q²
    ]
    np.testing.assert_allclose(y[:, 0], want, rtol=1e-6)
    assert want[0] == pytest.approx(5.995)


def test_the_variance_target_keeps_one_column_per_budgeted_term():
    cost, discount = f32([[1.0, 0.0]]), f32([0.5])
    next_q, next_v, q = f32([[2.0, 1.0]]), f32([[1.0, 4.0]]), f32([[1.0, 0.5]])
    y = variance_target(cost, discount, next_q, next_v, q)
    np.testing.assert_allclose(y, [[1 + 2 * 0.5 * 2 + 0.25 * 1 + 0.25 * 4 - 1, 0.25 * 4 + 0.25 * 1 - 0.25]], rtol=1e-6)


def test_the_variance_loss_is_the_wasserstein_distance_of_the_variances():
    v, y = f32([[4.0, 1.0], [9.0, 0.25]]), f32([[1.0, 1.0], [4.0, 1.0]])
    # V + V̂ − 2√(V V̂) per entry, summed over the outputs, averaged over the batch: (1 + 0 + 1 + 0.25)/2
    np.testing.assert_allclose(variance_loss(v, y), np.mean(np.sum(v + y - 2 * np.sqrt(v * y), axis=-1)), rtol=1e-6)
    assert float(variance_loss(v, y)) == pytest.approx(1.125)
    assert float(variance_loss(y, y)) == 0.0


def test_the_variance_output_is_never_negative_and_its_root_has_a_finite_gradient():
    z = jnp.linspace(-1e4, 1e4, 2001)
    v = nonnegative_variance(z)
    assert float(v.min()) >= np.float32(VARIANCE_FLOOR) and bool(jnp.all(jnp.isfinite(v)))
    grad = jax.grad(lambda z: jnp.sum(jnp.sqrt(nonnegative_variance(z))))(z)
    assert bool(jnp.all(jnp.isfinite(grad)))
    wcsac = learner(WCSAC)
    last = wcsac.variance.net.layers[-1]
    last.bias[...] = jnp.full_like(last.bias[...], -1e3)  # a network that says "very negative"
    x = 100.0 * jax.random.normal(jax.random.key(0), (64, 2))
    out = wcsac.variance(x, jnp.tanh(jax.random.normal(jax.random.key(1), (64, 2))))
    assert out.shape == (64, 1) and float(out.min()) >= np.float32(VARIANCE_FLOOR)


# ---- the learner through its networks ------------------------------------------------------------------------


def test_the_cost_targets_bootstrap_at_a_sample_of_the_policy():
    """Q_c's target at the reward target's sample a' ~ π (the paper's; sac-lag's at tanh of the actor's
    mean), V_c's at a sample drawn with the update's key folded, both from the target networks."""
    wcsac = learner(WCSAC)
    b, key = batch(), jax.random.key(3)
    _, y_c = wcsac.targets(b, key)
    x_next = wcsac.normalize(b["next_obs"])
    a, _ = squashed_sample(wcsac.actor, x_next, key)
    q_next = wcsac.target_critics.cost(x_next, a)
    np.testing.assert_allclose(y_c[:, 0], b["cost"] + b["discount"] * np.maximum(q_next[:, 0], 0.0), rtol=1e-5)

    y_v = wcsac.variance_targets(b, key)
    a, _ = squashed_sample(wcsac.actor, x_next, key)
    q_next, v_next = wcsac.target_critics.cost(x_next, a), wcsac.target_variance(x_next, a)
    q = wcsac.critics.cost(wcsac.normalize(b["obs"]), b["action"])
    c, d = np.asarray(b["cost"])[:, None], np.asarray(b["discount"])[:, None]
    qn = np.maximum(np.asarray(q_next), 0.0)
    want = c**2 + 2 * d * c * qn + d**2 * np.asarray(v_next) + d**2 * qn**2 - np.asarray(q) ** 2
    np.testing.assert_allclose(y_v, np.maximum(want, VARIANCE_FLOOR), rtol=1e-5, atol=1e-7)
    assert y_v.shape == (4, 1)


def test_the_actor_weighs_the_cvar_and_alpha_one_weighs_the_mean():
    wcsac = learner(WCSAC, risk_level=0.1)
    x = jax.random.normal(jax.random.key(0), (5, 2))
    a = jnp.tanh(jax.random.normal(jax.random.key(1), (5, 2)))
    q_c, v_c = wcsac.critics.cost(x, a), wcsac.variance(x, a)
    np.testing.assert_allclose(wcsac.cost_value(x, a), q_c + 1.75498 * np.sqrt(v_c), rtol=1e-5)
    assert float(v_c.min()) > 0.0  # so Γ > Q_c
    neutral = learner(WCSAC, risk_level=1.0)
    np.testing.assert_array_equal(neutral.cost_value(x, a), neutral.critics.cost(x, a))


def test_the_actor_loss_is_sac_lags_with_gamma_for_q_c():
    """−mean((min Q_r − α_T log π − λ Γ)/(1 + λ)) at a reparameterized sample."""
    wcsac = learner(WCSAC, lambda_init=2.0)
    x, key = jax.random.normal(jax.random.key(0), (6, 2)), jax.random.key(4)
    loss, _ = wcsac.actor_loss(wcsac.actor, x, key)
    a, logp = squashed_sample(wcsac.actor, x, key)
    q_r = np.min(np.asarray(wcsac.critics.reward(x, a)), axis=0)
    gamma = np.asarray(wcsac.cost_value(x, a))[:, 0]
    want = -np.mean((q_r - float(wcsac.temperature()) * np.asarray(logp) - 2.0 * gamma) / 3.0)
    assert float(loss) == pytest.approx(want, rel=1e-5)


def test_an_update_steps_the_variance_at_the_critics_rate_and_moves_its_target_by_tau():
    wcsac = learner(WCSAC, tau=0.25, actor_learning_rate=1e-9, critic_learning_rate=1e-2)
    opts = wcsac.optimizers()
    assert set(opts.keys()) == {"actor", "critics", "temperature", "variance"}
    before, target_before = params(wcsac.variance), params(wcsac.target_variance)
    metrics = wcsac.update(opts, batch(), jax.random.key(1), jnp.asarray(0))
    after = params(wcsac.variance)
    assert max(float(np.abs(a - b).max()) for a, b in zip(after, before, strict=True)) > 1e-3  # Adam at 1e-2
    for t, t0, o in zip(params(wcsac.target_variance), target_before, after, strict=True):
        np.testing.assert_allclose(t, 0.75 * t0 + 0.25 * o, rtol=1e-6, atol=1e-7)
    assert float(metrics["loss/critic_cost_variance"]) > 0 and float(metrics["q/cost_variance"]) > 0
    assert {"loss/actor", "loss/critic_cost", "alpha"} <= set(metrics)  # and SAC-Lag's step


# ---- training, by name -----------------------------------------------------------------------------------------


def test_wcsac_is_registered_and_the_cli_takes_its_risk_level():
    assert registry().get("learners", "wcsac") is WCSAC and learners()["wcsac"] is WCSAC
    assert issubclass(WCSAC, SACLag) and WCSAC.supports_budgets
    cls, config, _ = parse_learner_command(["wcsac", "--env", TOY_ENV_ID, "--risk-level", "0.5"], "crax train", "")
    assert cls is WCSAC and config.risk_level == 0.5 and WCSAC.Config().risk_level == 0.1
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="risk_level"):
            WCSAC.Config(risk_level=bad)


def test_wcsac_trains_two_iterations_on_the_toy_env_with_finite_metrics():
    """The updates start at the second iteration (learning_starts 64, 32 transitions an iteration): λ steps
    every iteration (a bound of 0.1 the random policy exceeds), the variance critic from the second."""
    cls = registry().get("learners", "wcsac")
    trainer = make_trainer(cls, small(cls, total_steps=2 * 32, safety_bound=0.1), ToyEnv())
    start = trainer.init(jax.random.key(0))
    first, m1 = trainer.run(start, 1)
    second, m2 = trainer.run(first, 1)
    for metrics in (m1, m2):
        for k, v in metrics.items():
            assert np.isfinite(np.asarray(v)).all(), k
    lam = [float(np.asarray(m["multiplier/lagrange"]).ravel()[-1]) for m in (m1, m2)]
    assert 0.0 < lam[0] < lam[1]
    assert float(np.asarray(m1["loss/critic_cost_variance"]).max()) == 0.0  # no update yet
    assert float(np.asarray(m2["loss/critic_cost_variance"]).min()) > 0.0
    assert float(np.asarray(m2["q/cost_variance"]).min()) > 0.0
    variance = lambda s: jax.tree.leaves(nnx.state(trainer.learner(s).variance, nnx.Param))  # noqa: E731
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(variance(start), variance(first), strict=True))
    assert any(not np.array_equal(np.asarray(a), np.asarray(b))
               for a, b in zip(variance(first), variance(second), strict=True))


def test_per_term_budgets_keep_one_variance_output_per_term():
    config = small(WCSAC, budgets=("cost/hazard=1",), total_steps=3 * 32)
    trainer = make_trainer(WCSAC, config, ToyEnv())
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 3)
    assert "multiplier/lagrange/cost/hazard" in metrics
    assert trainer.learner(state).variance.net.layers[-1].kernel.shape[-1] == 1
    assert np.isfinite(np.asarray(metrics["loss/critic_cost_variance"])).all()


@pytest.mark.slow  # a learning run of 38,400 steps (about 30 s on 2 cores)
def test_wcsac_keeps_the_cost_under_its_bound_on_the_toy_env(tmp_path):
    """sac-lag's learning run (test_off_policy.py) with wcsac at risk level 0.1: below the bound d = 2 per
    episode while still moving (a random policy's return: ~0; sac-lag's bar)."""
    result = runs.train(WCSAC, WCSAC.Config(**LEARN), ToyEnv(), run_dir=tmp_path / "wcsac", progress=False)
    final = result.final[0]
    assert final["cost"] < 2.0 and final["return"] > 3.0
    assert [h for h in result.history if "q/cost_variance" in h][-1]["q/cost_variance"] > 0
