"""The off-policy family (SAC, TD3 and their Lagrangian and PID variants, WCSAC) on the toy env: the replay
buffer, n-step transitions, critic targets, target networks, the shared multiplier rules, and
training, checkpoints and resume through the runs layer."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax import runs
from crax.learners import (
    DDPG,
    DDPGPID,
    PPOPID,
    SAC,
    SACPID,
    TD3,
    TD3PID,
    WCSAC,
    DDPGLag,
    OffPolicyTrainer,
    PPOLag,
    ReplayBuffer,
    SACLag,
    TD3Lag,
    make_trainer,
)
from crax.learners.off_policy.sac import squashed_sample
from crax.learners.off_policy.trainer import n_step_transitions
from crax.learners.shared.trainer import Transition
from crax.plugins.manager import registry
from crax.runs import checkpoint as ckpt
from crax.runs.metrics import read_metrics
from tests import trees
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

OFF_POLICY = [SACLag, TD3Lag, SACPID, TD3PID, DDPGLag, DDPGPID, WCSAC]
SMALL = dict(num_envs=8, unroll_length=4, batch_size=16, updates_per_iteration=2, buffer_size=256,
             learning_starts=64, actor_hidden=(16,), critic_hidden=(16,), eval_envs=4, num_evals=1,
             checkpoint_every=4, iterations_per_call=1)
"""One iteration: 8 envs × 4 steps = 32 transitions, 2 gradient steps of 16."""


def small(cls, **overrides):
    return cls.Config(**{**SMALL, **overrides})


def learner(cls, **overrides):
    return cls(small(cls, **overrides), 2, 2, 16, rngs=nnx.Rngs(0))


# ---- the replay buffer ---------------------------------------------------------------------------


def test_replay_insert_wraps_at_capacity_and_samples_only_filled_slots():
    buf = ReplayBuffer.empty({"x": jnp.zeros((2,)), "r": jnp.zeros(())}, capacity=5)
    buf = buf.insert({"x": jnp.ones((3, 2)), "r": jnp.arange(1.0, 4.0)})
    assert int(buf.position) == 3 and int(buf.size) == 3
    drawn = buf.sample(jax.random.key(0), 200)["r"]
    assert set(np.asarray(drawn).tolist()) == {1.0, 2.0, 3.0}  # never an empty slot's 0
    buf = buf.insert({"x": jnp.ones((3, 2)), "r": jnp.arange(4.0, 7.0)})
    np.testing.assert_array_equal(buf.data["r"], [6.0, 2.0, 3.0, 4.0, 5.0])  # 6 overwrote the oldest
    assert int(buf.position) == 1 and int(buf.size) == 5
    with pytest.raises(ValueError, match="cannot insert 6 transitions into a replay buffer of 5"):
        buf.insert({"x": jnp.ones((6, 2)), "r": jnp.zeros(6)})


# ---- n-step transitions ---------------------------------------------------------------------------


def rollout(rewards, dones, truncations=None):
    """A one-env rollout ``(T, 1)``: obs t is [t], final_obs t is [t + 1] (10 + t after a truncation)."""
    t = len(rewards)
    col = lambda x: jnp.asarray(x, jnp.float32)[:, None]  # noqa: E731
    trunc = col(truncations if truncations is not None else [0.0] * t)
    obs = jnp.arange(t, dtype=jnp.float32)[:, None, None]
    final = jnp.where(trunc[..., None] > 0, 10.0 + obs, obs + 1.0)
    zeros = jnp.zeros((t, 1, 1))
    return Transition(obs=obs, u=zeros, logp=col([0.0] * t), loc=zeros, scale=zeros, reward=col(rewards),
                      cost=2.0 * col(rewards), done=col(dones), truncation=trunc, final_obs=final, episode={},
                      events={}, step_costs={})


def test_n_step_returns_stop_at_episode_ends_and_at_the_rollouts_end():
    g = 0.5
    out = n_step_transitions(rollout([1.0, 2.0, 4.0, 8.0], [0.0, 1.0, 0.0, 0.0]), 2, g)
    # t=0: r0 + g r1, ends at the termination of step 1 (discount 0); t=1: r1 alone (terminal);
    # t=2: r2 + g r3, bootstraps from final_obs of step 3 with g²; t=3: the rollout's last step, r3 with g.
    np.testing.assert_allclose(out["reward"], [1.0 + g * 2.0, 2.0, 4.0 + g * 8.0, 8.0])
    np.testing.assert_allclose(out["cost"], 2.0 * out["reward"])
    np.testing.assert_allclose(out["discount"], [0.0, 0.0, g**2, g])
    np.testing.assert_allclose(out["next_obs"][:, 0], [2.0, 2.0, 4.0, 4.0])
    np.testing.assert_allclose(out["obs"][:, 0], [0.0, 1.0, 2.0, 3.0])


def test_a_truncated_episode_bootstraps_from_its_final_observation():
    out = n_step_transitions(rollout([1.0, 1.0, 1.0], [1.0, 0.0, 0.0], truncations=[1.0, 0.0, 0.0]), 3, 0.9)
    assert out["discount"][0] == pytest.approx(0.9) and out["next_obs"][0, 0] == 10.0  # the truncated step's
    np.testing.assert_allclose(out["reward"], [1.0, 1.9, 1.0])
    np.testing.assert_allclose(out["discount"], [0.9, 0.81, 0.9])


# ---- targets, target networks, delayed actor -----------------------------------------------------------


def batch(n=4, seed=0):
    k = jax.random.split(jax.random.key(seed), 4)
    return {"obs": jax.random.normal(k[0], (n, 2)), "action": jnp.tanh(jax.random.normal(k[1], (n, 2))),
            "reward": jnp.arange(n, dtype=jnp.float32), "cost": jnp.asarray([0.0, 1.0, 0.0, 1.0][:n]),
            "next_obs": jax.random.normal(k[2], (n, 2)), "discount": jnp.asarray([0.99, 0.0, 0.98, 0.99][:n])}


def params(module) -> list[np.ndarray]:
    """Copies of a module's parameters (``nnx.state`` leaves follow later in-place updates)."""
    return [np.array(x) for x in jax.tree.leaves(nnx.state(module, nnx.Param))]


def test_sac_targets_are_the_twin_minimum_with_the_entropy_term_and_the_stored_discount():
    """The reward target bootstraps at a sample of the policy; the cost target at tanh of its mean."""
    sac = learner(SACLag, reward_scaling=2.0)
    b, key = batch(), jax.random.key(3)
    y_r, y_c = sac.targets(b, key)
    x_next = sac.normalize(b["next_obs"])
    a, logp = squashed_sample(sac.actor, x_next, key)
    q_r, _ = sac.target_critics(x_next, a)
    _, q_c = sac.target_critics(x_next, jnp.tanh(sac.actor(x_next)[0]))
    alpha = float(sac.temperature())
    want_r = 2.0 * b["reward"] + b["discount"] * (np.minimum(q_r[0], q_r[1]) - alpha * logp)
    np.testing.assert_allclose(y_r, want_r, rtol=1e-5)
    np.testing.assert_allclose(y_c[:, 0], b["cost"] + b["discount"] * np.maximum(q_c[:, 0], 0.0), rtol=1e-5)
    assert y_r[1] == pytest.approx(2.0)  # a terminal transition: the reward alone


@pytest.mark.parametrize("cls", [SACLag, TD3Lag, DDPGLag])
def test_the_cost_target_never_bootstraps_from_a_negative_cost_value(cls):
    agent = learner(cls)
    last = agent.target_critics.cost_q.layers[-1]
    last.kernel[...] = jnp.zeros_like(last.kernel[...])
    b = batch()
    last.bias[...] = jnp.full_like(last.bias[...], -3.0)  # Q'_c = -3 everywhere
    _, y_c = agent.targets(b, jax.random.key(0))
    np.testing.assert_allclose(y_c[:, 0], b["cost"])  # c + d·max(-3, 0) = c: no target below 0
    last.bias[...] = jnp.full_like(last.bias[...], 2.0)  # a positive value is kept
    _, y_c = agent.targets(b, jax.random.key(0))
    np.testing.assert_allclose(y_c[:, 0], b["cost"] + 2.0 * b["discount"], rtol=1e-6)


def test_td3_targets_smooth_the_target_action_and_carry_no_entropy_term():
    td3 = learner(TD3Lag, target_noise=0.0)
    b = batch()
    y_r, _ = td3.targets(b, jax.random.key(0))
    x_next = td3.normalize(b["next_obs"])
    q_r, _ = td3.target_critics(x_next, jnp.tanh(td3.target_actor(x_next)))
    np.testing.assert_allclose(y_r, b["reward"] + b["discount"] * np.minimum(q_r[0], q_r[1]), rtol=1e-5)


def test_ddpg_has_one_reward_critic_no_target_actor_and_bootstraps_at_its_online_actor():
    ddpg = learner(DDPGLag)
    assert not hasattr(ddpg.critics, "reward_q2") and not hasattr(ddpg, "target_actor")
    b = batch()
    y_r, y_c = ddpg.targets(b, jax.random.key(0))
    x_next = ddpg.normalize(b["next_obs"])
    q_r, q_c = ddpg.target_critics(x_next, jnp.tanh(ddpg.actor(x_next)))
    assert q_r.shape == (1, 4)
    np.testing.assert_allclose(y_r, b["reward"] + b["discount"] * q_r[0], rtol=1e-5)
    np.testing.assert_allclose(y_c[:, 0], b["cost"] + b["discount"] * np.maximum(q_c[:, 0], 0.0), rtol=1e-5)


@pytest.mark.parametrize("cls", [SACLag, TD3Lag, DDPG], ids=lambda c: c.name)
def test_an_update_moves_the_targets_by_tau_towards_the_new_online_networks(cls):
    lrn = learner(cls, tau=0.25)
    opts = lrn.optimizers()
    old_target = params(lrn.target_critics)
    online_before = params(lrn.critics)
    lrn.update(opts, batch(), jax.random.key(1), jnp.asarray(0))
    online = params(lrn.critics)
    assert any(not np.allclose(a, b) for a, b in zip(online, online_before,
                                                       strict=True))  # the critics stepped
    want = [0.75 * t + 0.25 * o for t, o in zip(old_target, online, strict=True)]
    for a, b in zip(params(lrn.target_critics), want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("auto", [True, False])
def test_sac_tunes_its_temperature_only_with_auto_alpha(auto):
    lrn = learner(SAC, init_alpha=0.2, auto_alpha=auto)
    opts = lrn.optimizers()
    for step in range(3):
        metrics = lrn.update(opts, batch(), jax.random.key(step), jnp.asarray(step))
    alpha = float(lrn.temperature())
    assert float(metrics["alpha"]) == pytest.approx(alpha)
    assert (alpha != pytest.approx(0.2, abs=1e-7)) is auto  # OmniSafe's yamls keep α fixed at 0.2


def test_td3_steps_its_actor_and_targets_only_every_policy_delay_updates():
    td3 = learner(TD3, policy_delay=2)
    opts = td3.optimizers()
    actor0, target0 = params(td3.actor), params(td3.target_critics)
    td3.update(opts, batch(), jax.random.key(0), jnp.asarray(1))  # not due: critics only
    for a, b in zip(params(td3.actor), actor0, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(params(td3.target_critics), target0, strict=True):
        np.testing.assert_array_equal(a, b)
    td3.update(opts, batch(), jax.random.key(0), jnp.asarray(2))  # due
    assert any(not np.array_equal(a, b) for a, b in zip(params(td3.actor), actor0, strict=True))


# ---- the shared multiplier rules ------------------------------------------------------------------


@pytest.mark.parametrize(("ppo_cls", "off_cls"), [(PPOLag, SACLag), (PPOPID, TD3PID)], ids=["lagrangian", "pid"])
def test_both_families_move_the_multiplier_alike_for_the_same_violations(ppo_cls, off_cls):
    fields = {"lambda_lr": 0.7} if ppo_cls is PPOLag else {"kp": 0.3, "ki": 0.05, "kd": 0.2}
    ppo = ppo_cls(tiny(ppo_cls.Config, **fields), 2, 2, 16, rngs=nnx.Rngs(0))
    off = learner(off_cls, **fields)
    trajectory = []
    for v in (0.5, -0.2, 0.3, 0.3, -1.0, 0.1):
        ppo.multiplier_update(jnp.asarray(v))
        off.multiplier_update(jnp.asarray(v))
        trajectory.append(float(off.multipliers()["lagrange"]))
        for name, value in ppo.multipliers().items():
            assert float(off.multipliers()[name]) == float(value), name
    assert max(trajectory) > 0.0  # the rule did move λ


def test_the_actor_objective_mixes_reward_and_cost_values_with_lambda():
    lrn = learner(SACLag, lambda_init=3.0)
    q_r, q_c = jnp.asarray([1.0, 2.0]), jnp.asarray([0.5, 1.0])
    np.testing.assert_allclose(lrn.objective(q_r, q_c), (q_r - 3.0 * q_c) / 4.0)


# ---- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "message"), [
    ({"buffer_size": 8}, r"buffer_size \(8\) is smaller than one batch"),
    ({"buffer_size": 20}, r"cannot hold one iteration's transitions"),
    ({"updates_per_iteration": 0}, "updates_per_iteration"),
    ({"tau": 1.5}, "tau"),
    ({"tau": 0.0}, "tau"),
    ({"n_step": 5}, r"n_step \(5\) must be at most unroll_length \(4\)"),
    ({"learning_starts": 300}, "updates would never start"),
])
def test_bad_off_policy_configs_are_refused_naming_the_fix(changes, message):
    with pytest.raises(ValueError, match=message):
        small(SACLag, **changes)


# ---- training through the runs layer ---------------------------------------------------------------------


@pytest.mark.parametrize("cls", OFF_POLICY, ids=lambda c: c.name)
@pytest.mark.slow
def test_a_short_run_trains_and_resumes_to_identical_metrics(cls, tmp_path):
    """6 iterations straight, and 4 + a resume for 2 more from the checkpoint, write the same metrics
    and the same final state, the replay buffer included (the updates start at iteration 2)."""
    steps = small(cls).steps_per_iteration
    straight = runs.train(cls, small(cls, total_steps=6 * steps), ToyEnv(), run_dir=tmp_path / "a", progress=False)
    assert isinstance(straight.trainer, OffPolicyTrainer)
    runs.train(cls, small(cls, total_steps=4 * steps), ToyEnv(), run_dir=tmp_path / "b", progress=False)
    resumed = runs.train(None, small(cls, total_steps=6 * steps), run_dir=tmp_path / "b", resume=True,
                         progress=False)
    trees.assert_equal(straight.state, resumed.state)
    assert int(resumed.state.replay.size[0]) == 6 * steps  # 192 of 256: not yet wrapped
    rows = lambda d: [r for r in read_metrics(d) if "loss/critic_reward" in r]  # noqa: E731
    assert [r["step"] for r in rows(tmp_path / "b")] == [steps * i for i in range(1, 7)]
    for x, y in zip(rows(tmp_path / "a"), rows(tmp_path / "b"), strict=True):
        assert {k: v for k, v in x.items() if not k.startswith("perf/")} == \
               {k: v for k, v in y.items() if not k.startswith("perf/")}
    last = rows(tmp_path / "a")[-1]
    assert last["loss/critic_reward"] > 0 and "multiplier/lagrange" in last
    assert "episode/count" in last and straight.evals  # the episode statistics, and the evaluation
    assert "constraint/violation" in last and "constraint/step_cost" in last


def test_per_term_budgets_keep_one_multiplier_and_one_cost_output_per_term(tmp_path):
    config = small(SACLag, budgets=("cost/hazard=1",), total_steps=3 * 32)
    trainer = make_trainer(SACLag, config, ToyEnv())
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 3)
    assert "multiplier/lagrange/cost/hazard" in metrics and "constraint/violation/cost/hazard" in metrics
    assert trainer.learner(state).critics.cost_q.layers[-1].kernel.shape[-1] == 1
    assert state.replay.data["cost"].shape[-1] == 1


def test_no_gradient_step_is_taken_until_the_buffer_holds_learning_starts_transitions():
    """32 transitions an iteration, learning_starts 64: the first iteration leaves the networks and
    their optimizers as they were and logs zero losses; the second updates them."""
    trainer = make_trainer(SACLag, small(SACLag, total_steps=2 * 32), ToyEnv())
    start = trainer.init(jax.random.key(0))
    critics = lambda state: nnx.state(trainer.learner(state).critics)  # noqa: E731
    first, metrics = trainer.run(start, 1)
    assert int(first.replay.size[0]) == 32
    for a, b in zip(jax.tree.leaves(critics(start)), jax.tree.leaves(critics(first)), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert float(np.abs(np.asarray(metrics["loss/critic_reward"])).max()) == 0.0
    second, metrics = trainer.run(first, 1)
    moved = [not np.array_equal(np.asarray(a), np.asarray(b))
             for a, b in zip(jax.tree.leaves(critics(first)), jax.tree.leaves(critics(second)), strict=True)]
    assert any(moved) and float(np.asarray(metrics["loss/critic_reward"]).min()) > 0


@pytest.mark.parametrize("cls", [DDPG, DDPGLag, DDPGPID], ids=lambda c: c.name)
def test_ddpg_learners_train_on_the_toy_env_from_their_names(cls):
    """Found by name as ``crax train NAME`` finds them; three iterations (the updates start at the
    second) move the actor and the critics and log finite losses and the multiplier."""
    assert registry().get("learners", cls.name) is cls
    trainer = make_trainer(cls, small(cls, total_steps=3 * 32), ToyEnv())
    start = trainer.init(jax.random.key(0))
    state, metrics = trainer.run(start, 3)
    for part in ("actor", "critics"):
        before, after = (jax.tree.leaves(nnx.state(getattr(trainer.learner(s), part), nnx.Param)) for s in (start, state))
        assert any(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(before, after, strict=True)), part
    assert np.isfinite(np.asarray(metrics["loss/actor"])).all()
    assert float(np.asarray(metrics["loss/critic_reward"])[..., -1].min()) > 0  # the last iteration's
    assert ("multiplier/lagrange" in metrics) == (cls is not DDPG)


def test_a_checkpoint_round_trips_the_buffer_bit_for_bit(tmp_path):
    config = small(TD3Lag, total_steps=3 * 32, checkpoint_every=3)
    result = runs.train(TD3Lag, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)
    restored = ckpt.load_checkpoint(tmp_path / "r", result.trainer.abstract_state())["state"]
    for k, v in result.state.replay.data.items():
        np.testing.assert_array_equal(np.asarray(v), np.asarray(restored.replay.data[k]), err_msg=k)
    assert int(restored.replay.position[0]) == int(result.state.replay.position[0]) == 96
    assert dataclasses.asdict(config)["buffer_size"] == restored.replay.data["obs"].shape[1]


def test_a_replay_buffer_that_cannot_fit_is_refused_naming_the_buffer(tmp_path):
    config = small(SACLag, buffer_size=2**40, learning_starts=0)  # 2^40 transitions: terabytes
    with pytest.raises(ValueError, match="a replay buffer of 1,099,511,627,776 transitions.*lower --buffer-size"):
        runs.train(SACLag, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()


LEARN = dict(num_envs=32, unroll_length=4, batch_size=128, updates_per_iteration=8, buffer_size=50_000,
             learning_starts=512, actor_hidden=(32, 32), critic_hidden=(32, 32), eval_envs=32, num_evals=1,
             checkpoint_every=1_000, iterations_per_call=50, total_steps=300 * 128, safety_bound=2.0)
"""A learning run on the toy env: 300 iterations of 128 steps, the bound d = 2 per episode."""


@pytest.mark.slow  # two learning runs of 38,400 steps each (about 10 s each on 2 cores)
def test_sac_lag_keeps_the_cost_under_its_bound_where_sac_runs_through_the_hazard_band(tmp_path):
    """The off-policy family learns: unconstrained SAC follows the toy env's diagonal reward through
    the hazard band; SAC-Lag, at its default multiplier rate and temperature, trades reward for cost
    and ends below the bound d = 2 per episode while still moving (a random policy's return: ~0)."""
    sac = runs.train(SAC, SAC.Config(**LEARN), ToyEnv(), run_dir=tmp_path / "sac", progress=False).final[0]
    lag = runs.train(SACLag, SACLag.Config(**LEARN), ToyEnv(), run_dir=tmp_path / "lag", progress=False).final[0]
    assert sac["return"] > 8.0 and sac["cost"] > 4.0  # learned, through the band
    assert lag["cost"] < 2.0 and lag["cost"] < 0.5 * sac["cost"]
    assert lag["return"] > 3.0
