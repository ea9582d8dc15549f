"""Per-constraint budgets: one cost-value output and one multiplier per budgeted term, each moved only
by its own term's violation (hooks on given numbers, then a real iteration on a two-cost toy env)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.cli import train as train_cli
from crax.learners import CRPO, FOCOPS, P3O, PPO, PPOPID, PolicyBatch, PPOLag, Trainer
from crax.runs import metrics
from tests.learners.conftest import TOY_ENV_ID, tiny
from tests.learners.test_train import tiny_flags
from tests.learners.toy_env import ToyEnvTwoCosts

BUDGETS = ("cost/hazard=4", "edge=1")  # the cost/ prefix is optional
T = 100  # episode length for the hook tests: d/T = (0.04, 0.01)


def make(cls, **overrides):
    return cls(tiny(cls.Config, budgets=BUDGETS, **overrides), 3, 2, T, rngs=nnx.Rngs(0))


def test_budget_specs_parse_and_bad_ones_name_the_form():
    config = tiny(PPOLag.Config, budgets=BUDGETS)
    assert config.budget_bounds == {"cost/hazard": 4.0, "cost/edge": 1.0}
    for bad in (("contact",), ("contact=-1",), ("=3",), ("a=1", "cost/a=2")):
        with pytest.raises(ValueError, match="budgets"):
            tiny(PPOLag.Config, budgets=bad)


def test_each_multiplier_moves_only_with_its_own_violation():
    v = jnp.asarray([0.5, -0.2])  # hazard over its budget, edge under it
    lag = make(PPOLag, lambda_lr=2.0)
    assert lag.rule.lagrange[...].shape == (2,) and lag.cost_critic.layers[-1].kernel[...].shape[-1] == 2
    np.testing.assert_allclose(lag.violation(jnp.asarray([0.1, 0.005])), [0.1 - 0.04, 0.005 - 0.01], rtol=1e-6)
    lag.multiplier_update(v)
    np.testing.assert_allclose(lag.rule.lagrange[...], [1.0, 0.0])
    lag.multiplier_update(jnp.asarray([0.0, 0.3]))
    np.testing.assert_allclose(lag.rule.lagrange[...], [1.0, 0.6], rtol=1e-6)
    # (Â_r − Σ λ_k Â_c,k) / (1 + Σ λ_k)
    adv = lag.advantage(jnp.asarray([1.0, 2.0]), jnp.asarray([[1.0, 0.5], [0.0, -1.0]]), v)
    np.testing.assert_allclose(adv, [(1.0 - 1.0 - 0.3) / 2.6, (2.0 + 0.6) / 2.6], rtol=1e-6)

    pid = make(PPOPID, kd=0.0)
    pid.multiplier_update(v)  # e = T·v = (50, −20); I = max(0, 0.001 + 0.01 e)
    np.testing.assert_allclose(pid.rule.integral[...], [0.501, 0.0], rtol=1e-5)
    np.testing.assert_allclose(pid.rule.lagrange[...], [0.501 + 0.1 * 0.05 * 50, 0.0], rtol=1e-5)

    p3o = make(P3O, kappa_init=0.01, kappa_factor=1.1, kappa_max=50.0)
    p3o.multiplier_update(v)
    np.testing.assert_allclose(p3o.rule.kappa[...], [0.011, 0.01], rtol=1e-6)  # grows ×1.1 only where v > 0

    focops = make(FOCOPS, lambda_optimizer="sgd", lambda_init=0.1, lambda_lr=1.0)
    focops.multiplier_update(v)
    np.testing.assert_allclose(focops.rule.lagrange[...], [0.6, 0.0], rtol=1e-6)


def test_p3o_penalises_each_term_and_crpo_follows_the_worst():
    p3o = make(P3O, kappa_init=0.01, kappa_max=0.01)
    ratio = jnp.ones(2)
    batch = PolicyBatch(ratio=ratio, adv_r=jnp.zeros(2), adv_c=jnp.asarray([[1.0, -2.0], [1.0, -2.0]]),
                        kl=jnp.zeros(2), violation=jnp.asarray([0.005, 0.005]))
    loss, extra = p3o.policy_loss(batch)
    # per term: max(0, surrogate_k + T·v_k) = (1.5, 0); loss = Σ κ_k · that = 0.01 · 1.5
    assert float(extra["loss/p3o_penalty"]) == pytest.approx(1.5)
    assert float(loss) == pytest.approx(0.015, rel=1e-5)

    crpo = make(CRPO)
    adv_c = jnp.asarray([[1.0, 5.0], [2.0, 6.0]])
    np.testing.assert_array_equal(crpo.advantage(jnp.asarray([7.0, 8.0]), adv_c, jnp.asarray([-0.1, -0.2])), [7, 8])
    np.testing.assert_array_equal(crpo.advantage(jnp.asarray([7.0, 8.0]), adv_c, jnp.asarray([0.1, 0.3])), [-5, -6])
    # within the tolerance (T·v ≤ distance = 2 for every term) the reward; past it on one term, that term
    np.testing.assert_array_equal(crpo.advantage(jnp.asarray([7.0, 8.0]), adv_c, jnp.asarray([0.01, 0.02])), [7, 8])
    np.testing.assert_array_equal(crpo.advantage(jnp.asarray([7.0, 8.0]), adv_c, jnp.asarray([0.03, 0.02])), [-1, -2])


def test_a_real_iteration_keeps_one_multiplier_per_term():
    # hazard has a huge budget (violation < 0: λ stays 0); edge has budget 0 (violation = its mean cost)
    config = tiny(PPOLag.Config, budgets=("cost/hazard=1000", "cost/edge=0"), lambda_lr=2.0)
    trainer = Trainer(PPOLag, config, ToyEnvTwoCosts())
    state, m = trainer.run(trainer.init(jax.random.key(0)), 1)
    edge = float(m["constraint/step_cost/cost/edge"][0, 0])
    assert edge > 0
    assert float(m["constraint/violation/cost/edge"][0, 0]) == pytest.approx(edge)
    assert float(m["multiplier/lagrange/cost/edge"][0, 0]) == pytest.approx(2.0 * edge, rel=1e-5)
    assert float(m["multiplier/lagrange/cost/hazard"][0, 0]) == 0.0
    assert float(m["constraint/violation/cost/hazard"][0, 0]) == pytest.approx(
        float(m["constraint/step_cost/cost/hazard"][0, 0]) - 1000 / 16, rel=1e-5)
    assert "multiplier/lagrange" not in m and np.all(np.isfinite(m["loss/value_cost"]))


def test_budget_errors_name_the_valid_choices(tmp_path, capsys):
    with pytest.raises(ValueError, match="cost terms this env does not have.*cost/edge, cost/hazard"):
        Trainer(PPOLag, tiny(PPOLag.Config, budgets=("cost/contact=5",)), ToyEnvTwoCosts())
    with pytest.raises(ValueError, match="learner 'ppo' keeps no per-term multipliers.*ppo-lag"):
        Trainer(PPO, tiny(PPO.Config, budgets=("cost/hazard=5",)), ToyEnvTwoCosts())
    # the command line takes the same form and records it in the run's config
    train_cli.train_main(["ppo-pid", "--env", "tests.learners.toy_env:ToyEnvTwoCosts", "--run-dir", str(tmp_path / "r"),
                       "--no-progress", "--total-steps", "64", "--budgets", "cost/hazard=4", "cost/edge=1",
                       *tiny_flags(num_evals=0)])
    records = [r for r in metrics.read_metrics(tmp_path / "r") if "loss/policy" in r]
    assert "multiplier/lagrange/cost/edge" in records[0] and "multiplier/lagrange/cost/hazard" in records[0]
    with pytest.raises(SystemExit) as exc:
        train_cli.train_main(["ppo-lag", "--env", TOY_ENV_ID, "--run-dir", str(tmp_path / "s"), "--no-progress",
                           "--budgets", "cost/contact=5", *tiny_flags()])
    assert exc.value.code == 2 and "cost/hazard" in capsys.readouterr().err
