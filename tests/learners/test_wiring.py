"""The trainer's wiring on known values: SPEC §5 defaults, what ``Trainer._learn`` feeds GAE, the
violation, the order of normalizer / multiplier / SGD, multipliers outside the optimizer, non-finite
losses, and sharded training matching unsharded training."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax import runs
from crax.learners import FOCOPS, PPOLag, Trainer, gae
from crax.learners.on_policy import trainer as trainer_module
from crax.learners.on_policy.trainer import Transition
from crax.learners.shared.networks import Normalizer, gaussian_log_prob
from tests.learners.conftest import PPO_FAMILY, TOY_ENV_ID, tiny
from tests.learners.toy_env import ToyEnv

ROOT = Path(__file__).resolve().parents[2]

# SPEC §5 (docs/SPEC.md): the shared PPO defaults and each learner's own.
SHARED = dict(learning_rate=5e-4, entropy_cost=5e-3, discounting=0.99, gae_lambda=0.95, clip_epsilon=0.3,
              reward_scaling=0.1, actor_hidden=(32, 32, 32, 32), critic_hidden=(256,) * 5, num_envs=2048,
              unroll_length=8, batch_size=1024, num_minibatches=32, num_epochs=6, total_steps=100_000_000,
              num_evals=5, eval_envs=128, safety_bound=25.0, normalize_observations=True,
              eval_policy="stochastic", desync_episodes=True, target_kl=None)
OWN = {
    "ppo": {},
    "ppo-cost": dict(cost_weight=1.0),
    "ppo-lag": dict(lambda_lr=3.0, lambda_init=0.0),
    # OmniSafe's CPPOPID.yaml, FOCOPS.yaml and P3O.yaml (issue 61)
    "ppo-pid": dict(kp=0.1, ki=0.01, kd=0.01, d_delay=10, p_ema=0.95, d_ema=0.95, sum_norm=True, diff_norm=False,
                    lambda_max=100.0, lambda_init=0.001),
    "ppo-saute": dict(saute_discount=0.99, saute_penalty=-1.0, saute_max_budget=3.0),
    "p3o": dict(kappa_init=20.0, kappa_factor=1.0, kappa_max=20.0),
    "focops": dict(lambda_optimizer="adam", lambda_lr=0.035, lambda_init=0.001, lambda_max=2.0, focops_lambda=1.5,
                   kl_delta=0.02, target_kl=0.02),
}
# The trust-region learners (docs/learners.md: OmniSafe's TRPO/CPO/PCPO/CUP configs): δ 0.01, 15 CG
# iterations, damping 0.1, backtracking by 0.8 (15 tries; CPO 20, PCPO 200), no entropy bonus.
TRUST_REGION = dict(entropy_cost=0.0, target_kl=0.01, cg_iterations=15, cg_damping=0.1, backtrack_coef=0.8,
                    backtrack_steps=15)
OWN |= {
    "trpo-lag": dict(TRUST_REGION, lambda_lr=3.0, lambda_init=0.0),
    "cpo": dict(TRUST_REGION, backtrack_steps=20, constraint_value="episode"),
    "pcpo": dict(TRUST_REGION, backtrack_steps=200, constraint_value="episode"),
    "crpo": dict(TRUST_REGION, distance=2.0),  # OmniSafe's OnCRPO.yaml: TRPO's, and its tolerance
    "cup": dict(lambda_optimizer="adam", lambda_lr=0.035, lambda_init=0.001, lambda_max=2.0, target_kl=0.01),
}
# The learners named after OmniSafe's algorithms take its yaml files' algorithm choices
# (crax/learners/on_policy/omnisafe_defaults.py): PPO-based ones clip 0.2, no entropy bonus, KL early stop at 0.02; the Lagrange rule by
# Adam (lr 0.035, λ₀ 0.001); Saute's and Simmer's budget fields as OmniSafe's PPOSaute/PPOSimmerPID.yaml.
OMNISAFE_PPO = dict(clip_epsilon=0.2, entropy_cost=0.0, target_kl=0.02)
OMNISAFE_LAGRANGE = dict(lambda_lr=0.035, lambda_init=0.001, lambda_optimizer="adam")
SIMMER = dict(saute_discount=0.999, saute_penalty=-1.0, saute_max_budget=3.0, simmer_upper_budget=None,
              simmer_kp=5e-4, simmer_ki=1e-5, simmer_kd=0.0, simmer_polyak=0.995)
OWN |= {
    "trpo": TRUST_REGION, "trpo-early-terminated": TRUST_REGION,
    "trpo-pid": dict(TRUST_REGION, kp=0.1, ki=0.01, kd=0.01, d_delay=10, lambda_max=100.0, lambda_init=0.001),
    "cppo-pid": dict(OMNISAFE_PPO, kp=0.1, ki=0.01, kd=0.01, d_delay=10, lambda_max=100.0, lambda_init=0.001),
    "rcpo": dict(TRUST_REGION, **OMNISAFE_LAGRANGE),
    "pdo": dict(OMNISAFE_PPO, **OMNISAFE_LAGRANGE),
    "ipo": dict(OMNISAFE_PPO, kappa=0.01, penalty_max=1.0),
    "trpo-saute": dict(TRUST_REGION, saute_discount=0.99, saute_penalty=-1.0, saute_max_budget=3.0),
    "ppo-simmer-pid": dict(OMNISAFE_PPO, **SIMMER),
    "trpo-simmer-pid": dict(TRUST_REGION, **SIMMER),
    "ppo-early-terminated": OMNISAFE_PPO,
}


@pytest.mark.parametrize("cls", PPO_FAMILY, ids=lambda c: c.name)
def test_config_defaults_are_spec_section_5(cls):
    config = cls.Config()
    for name, want in {**SHARED, **OWN[cls.name]}.items():
        assert getattr(config, name) == want, f"{cls.name}.{name}"
    assert config.steps_per_iteration == 262_144 and config.num_iterations == 382


class SpyLag(PPOLag):
    """PPO-Lag whose policy loss reports the multiplier it sees (to pin the update order)."""

    name = "spy-lag"

    def policy_loss(self, batch):
        loss, extra = super().policy_loss(batch)
        return loss, {**extra, "spy/lagrange_seen": self.rule.weight()}


def hand_transition(learner, n_steps=8, n_envs=8, seed=0):
    ks = jax.random.split(jax.random.key(seed), 4)
    obs = jax.random.uniform(ks[0], (n_steps, n_envs, 2), minval=-0.5, maxval=0.5)
    loc, scale = learner.policy(obs)
    u = loc + scale * jax.random.normal(ks[1], loc.shape)
    done = jnp.zeros((n_steps, n_envs)).at[3, :4].set(1.0).at[5, 4:].set(1.0)
    truncation = jnp.zeros((n_steps, n_envs)).at[3, :2].set(1.0).at[5, 4:6].set(1.0)
    zeros = jnp.zeros((n_steps, n_envs))
    cost = (jax.random.uniform(ks[3], (n_steps, n_envs)) < 0.3) * 1.0
    return Transition(
        obs=obs, u=u, logp=gaussian_log_prob(u, loc, scale), loc=loc, scale=scale,
        reward=jax.random.normal(ks[2], (n_steps, n_envs)), cost=cost,
        done=done, truncation=truncation, final_obs=obs + 0.25,
        episode={k: zeros for k in ("return", "cost", "length", "done")}, events={}, step_costs={"cost": cost},
    )


@pytest.mark.slow
def test_learn_feeds_gae_the_right_values_and_orders_normalizer_multiplier_sgd(monkeypatch):
    config = tiny(PPOLag.Config, safety_bound=4.0, lambda_lr=0.5)
    trainer = Trainer(SpyLag, config, ToyEnv(episode_length=16))
    model = jax.tree.map(lambda x: x[0], trainer.init(jax.random.key(0)).model)
    learner = nnx.merge(trainer.graphdef, model)[0]
    tr = hand_transition(learner)

    calls, batches = [], []
    monkeypatch.setattr(trainer_module, "gae", lambda *a: calls.append(a) or gae(*a))
    update = trainer._update
    monkeypatch.setattr(trainer, "_update", lambda m, b, k: batches.append(b) or update(m, b, k))
    untouched = jax.tree.map(jnp.copy, model)  # eager, the update hook changes the merged model in place
    _, metrics = trainer._learn(model, tr, jax.random.key(1))  # eager: the spies see concrete arrays

    # the normalizer is updated with the rollout before any value is computed
    norm = Normalizer(2)
    norm.update(tr.obs)
    after = nnx.merge(trainer.graphdef, untouched)[0]
    after.normalizer = norm
    v_r, v_c = after.values(tr.obs)
    nv_r, nv_c = after.values(tr.final_obs)
    (r_args, c_args) = calls
    termination = np.asarray(tr.done * (1 - tr.truncation))
    np.testing.assert_allclose(r_args[0], np.asarray(tr.reward) * 0.1, rtol=1e-6)  # reward scaling, reward only
    np.testing.assert_array_equal(c_args[0], tr.cost)
    for args, v, nv in ((r_args, v_r, nv_r), (c_args, v_c, nv_c)):
        np.testing.assert_allclose(args[1], v, rtol=1e-5, atol=1e-6)
        # truncations bootstrap from final_obs; after a termination GAE zeroes the next value, which may be any
        kept = (termination == 0).reshape(termination.shape + (1,) * (np.ndim(nv) - 2))
        np.testing.assert_allclose(np.where(kept, args[2], 0), np.where(kept, nv, 0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(args[3], termination)  # terminations cut the bootstrap, truncations do not
        np.testing.assert_array_equal(args[4], tr.done)
    assert termination[3, 2:4].all() and not termination[3, :2].any()

    # v = mean step cost − d/T, the multiplier steps once, before the SGD epochs that then see it
    v = float(np.mean(tr.cost)) - 4.0 / 16
    assert float(metrics["constraint/violation"]) == pytest.approx(v, abs=1e-6)
    lam = max(0.0, 0.0 + 0.5 * v)
    assert float(metrics["multiplier/lagrange"]) == pytest.approx(lam, abs=1e-6) and lam > 0
    assert float(metrics["spy/lagrange_seen"]) == pytest.approx(lam, abs=1e-6)

    # reward and cost advantages are normalized separately, each from its own GAE: reward advantages
    # standardized, cost advantages centred (decision 76, OmniSafe's); the update also sees the
    # iteration's violation and the scale that turns normalized cost advantages back into cost (1 here)
    (batch,) = batches
    adv = np.asarray(gae(*r_args)[0]).reshape(-1)
    got = batch.samples["adv_r"]
    np.testing.assert_allclose(got, (adv - adv.mean()) / (adv.std() + 1e-8), rtol=1e-4, atol=1e-5)
    assert abs(float(got.mean())) < 1e-5 and float(got.std()) == pytest.approx(1.0, abs=1e-4)
    adv = np.asarray(gae(*c_args)[0]).reshape(-1)
    got = batch.samples["adv_c"]
    np.testing.assert_allclose(got, adv - adv.mean(), rtol=1e-4, atol=1e-5)
    assert float(got.std()) == pytest.approx(adv.std(), rel=1e-4) and adv.std() != pytest.approx(1.0, abs=0.05)
    assert float(batch.violation) == pytest.approx(v, abs=1e-6)
    assert float(batch.cost_scale) == 1.0

    # the public iteration_batch is what the update hook received (and it steps the multiplier too)
    fresh = nnx.merge(trainer.graphdef, untouched)[0]
    again = trainer.iteration_batch(fresh, tr)
    for got, want in zip(jax.tree.leaves(again), jax.tree.leaves(batch), strict=True):
        np.testing.assert_array_equal(got, want)
    assert float(fresh.multipliers()["lagrange"]) == pytest.approx(lam, abs=1e-6)


def test_collect_rolls_out_without_learning():
    trainer = Trainer(PPOLag, tiny(PPOLag.Config, num_seeds=2), ToyEnv(episode_length=16))
    state = trainer.init(jax.random.key(0))
    moved, tr = trainer.collect(state, 5)
    assert tr.obs.shape == (2, 5, trainer.config.num_envs, 2) and tr.cost.shape == (2, 5, trainer.config.num_envs)
    for a, b in zip(jax.tree.leaves(moved.model), jax.tree.leaves(state.model), strict=True):
        np.testing.assert_array_equal(a, b)  # no update
    assert int(moved.env_steps[0]) == int(state.env_steps[0]) and int(moved.iteration[0]) == int(state.iteration[0])
    running = ~np.asarray(tr.done[:, -1], bool)  # (an env done at the last step was reset)
    assert running.any()
    np.testing.assert_array_equal(np.asarray(moved.env.obs)[running], np.asarray(tr.final_obs[:, -1])[running])
    _, same = trainer.collect(state, 5)
    np.testing.assert_array_equal(same.u, tr.u)  # from one state, the same rollout
    _, later = trainer.collect(moved, 5)
    assert not np.array_equal(later.u, tr.u)  # the keys moved on too


def test_multipliers_stay_out_of_the_optimizer_in_a_real_iteration():
    # every step costs 1 and d/T = 16/16: the violation is exactly zero, so ν must keep its initial value
    config = tiny(FOCOPS.Config, safety_bound=16.0, lambda_init=0.1)
    trainer = Trainer(FOCOPS, config, ToyEnv(episode_length=16, hazard_y=-10.0, pit_radius=0.0))
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 1)
    assert float(metrics["constraint/violation"][0, 0]) == 0.0
    learner, opt = nnx.merge(trainer.graphdef, jax.tree.map(lambda x: x[0], state.model))
    assert float(learner.rule.lagrange[...]) == pytest.approx(0.1)
    before = trainer.learner(trainer.init(jax.random.key(0)))
    changed = [not np.allclose(a, b) for a, b in zip(jax.tree.leaves(nnx.state(learner.actor, nnx.Param)),
                                                      jax.tree.leaves(nnx.state(before.actor, nnx.Param)), strict=True)]
    assert any(changed)  # the SGD epochs did run
    adam_mu = opt.opt_state[0].mu
    paths = {jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(adam_mu)[0]}
    assert len(paths) == len(jax.tree.leaves(nnx.state(learner, nnx.Param)))
    assert not any("lagrange" in p.split("'") for p in paths)


def test_a_non_finite_loss_stops_training_naming_the_iteration(tmp_path, monkeypatch):
    original = Trainer._learn

    def poisoned(self, model, tr, key, progress=0.0):
        model, metrics = original(self, model, tr, key, progress)
        return model, {**metrics, "train/nonfinite": jnp.where(self.config.learning_rate > 1.0, 1.0, 0.0)}

    monkeypatch.setattr(Trainer, "_learn", poisoned)
    config = tiny(PPOLag.Config, total_steps=4 * 64, learning_rate=2.0, checkpoint_every=1)
    with pytest.raises(runs.TrainingDiverged, match=r"iteration 1 .*non-finite.*no checkpoint"):
        runs.train(PPOLag, config, TOY_ENV_ID, run_dir=tmp_path / "r", progress=False)


def test_real_divergence_is_detected(tmp_path):
    # a learning rate of 1e12 blows the parameters up within the first iteration's SGD steps
    config = tiny(PPOLag.Config, total_steps=3 * 64, learning_rate=1e12, checkpoint_every=1)
    with pytest.raises(runs.TrainingDiverged, match="iteration 1 "):
        runs.train(PPOLag, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)


@pytest.mark.slow  # a fresh process with two host devices (set before JAX starts), eight trainer compiles
def test_sharded_training_matches_unsharded():
    script = textwrap.dedent("""
        import json, jax, numpy as np
        from crax.learners import PPOLag, Trainer
        from tests.learners.conftest import tiny
        from tests.learners.toy_env import ToyEnv
        assert len(jax.local_devices()) == 2
        out = {}
        for seeds in (1, 2):  # one seed: the env batch is split; two: the seeds are
            for devices in (1, 2):
                t = Trainer(PPOLag, tiny(PPOLag.Config, num_seeds=seeds, num_devices=devices), ToyEnv())
                state, m = t.run(t.init(jax.random.key(0)), 3)
                spread = None if t.sharding is None else list(jax.tree.leaves(state.env.obs)[0].sharding.spec)
                out[f"{seeds}-{devices}"] = {"spec": spread, **{k: np.asarray(v).tolist() for k, v in m.items()}}
        print(json.dumps(out))
    """)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2".strip()  # the tests' build options kept
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XLA_FLAGS": flags}
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["1-1"]["spec"] is None and out["1-2"]["spec"] == [None, "devices"]
    assert out["2-2"]["spec"] == ["devices"]
    for seeds in (1, 2):
        one, two = out[f"{seeds}-1"], out[f"{seeds}-2"]
        for k in one:
            if k != "spec":
                np.testing.assert_allclose(two[k], one[k], rtol=2e-3, atol=2e-4, err_msg=f"{seeds} seeds: {k}")
