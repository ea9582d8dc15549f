"""Each learner hook's update equation on given numbers (SPEC §5)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.core.env import EpisodeStats, Wrapper
from crax.learners import CRPO, FOCOPS, P3O, PPO, PPOPID, ConstrainedPPO, PolicyBatch, PPOCost, PPOLag, PPOSaute
from crax.learners.on_policy.family import IterationBatch
from crax.learners.shared.budget_envs import SauteBudget
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

EPISODE_LENGTH = 100
BOUND = 25.0  # d/T = 0.25 per step


def make(cls: type[ConstrainedPPO], **overrides) -> ConstrainedPPO:
    return cls(tiny(cls.Config, safety_bound=BOUND, **overrides), 3, 2, EPISODE_LENGTH, rngs=nnx.Rngs(0))


def batch(ratio, adv_r, adv_c, violation, kl=None):
    ratio = jnp.asarray(ratio, jnp.float32)
    return PolicyBatch(ratio=ratio, adv_r=jnp.asarray(adv_r, jnp.float32), adv_c=jnp.asarray(adv_c, jnp.float32),
                       kl=jnp.zeros_like(ratio) if kl is None else jnp.asarray(kl, jnp.float32),
                       violation=jnp.asarray(violation, jnp.float32))


def test_violation_is_mean_step_cost_minus_bound_over_horizon():
    assert float(make(PPO).violation(jnp.asarray(0.4))) == pytest.approx(0.4 - 25.0 / 100)


def test_ppo_lag_lambda_rises_above_bound_and_decays_to_zero_below():
    learner = make(PPOLag, lambda_lr=3.0)
    above = learner.violation(jnp.asarray(0.35))  # v = 0.1
    for k in range(1, 4):
        learner.multiplier_update(above)
        assert float(learner.rule.lagrange[...]) == pytest.approx(0.3 * k, rel=1e-5)
    below = learner.violation(jnp.asarray(0.2))  # v = -0.05 -> -0.15 per update
    values = []
    for _ in range(10):
        learner.multiplier_update(below)
        values.append(float(learner.rule.lagrange[...]))
    assert values[0] == pytest.approx(0.75, rel=1e-5)
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    assert values[-1] == 0.0 and min(values) == 0.0


def test_ppo_lag_mixes_advantages_and_stops_gradient_through_lambda():
    learner = make(PPOLag, lambda_init=3.0)
    adv = learner.advantage(jnp.asarray([1.0, 0.0]), jnp.asarray([0.5, 2.0]), jnp.asarray(0.0))
    np.testing.assert_allclose(adv, [(1.0 - 1.5) / 4.0, -6.0 / 4.0])
    # The policy loss must not produce a gradient for the multiplier.
    g = nnx.grad(lambda m: m.policy_loss(batch([1.1], [1.0], [1.0], 0.0))[0], argnums=nnx.DiffState(0, nnx.Variable))(learner)
    assert float(g["rule"]["lagrange"][...]) == 0.0


def test_ppo_pid_positional_rule_on_the_episode_cost():
    # OmniSafe's PIDLagrangian (the recorded comparison: test_omnisafe_on_policy.py), by hand: J = T·v + d
    learner = make(PPOPID, kp=1.0, ki=0.1, kd=2.0, d_delay=2, p_ema=0.5, d_ema=0.5, lambda_init=0.0)
    learner.multiplier_update(jnp.asarray(0.1))  # J = 35, e = 10
    assert float(learner.rule.integral[...]) == pytest.approx(1.0)  # I = 0 + 0.1 · 10
    assert float(learner.rule.p_ema[...]) == pytest.approx(5.0)  # P = 0.5 · 0 + 0.5 · 10
    assert float(learner.rule.d_ema[...]) == pytest.approx(17.5)  # D = 0.5 · 35
    assert float(learner.rule.lagrange[...]) == pytest.approx(5.0 + 1.0 + 2.0 * 17.5, rel=1e-5)  # D − D₋₂ = 17.5 − 0
    learner.multiplier_update(jnp.asarray(0.0))  # J = 25, e = 0: D = 21.25, D₋₂ = 0 still
    assert float(learner.rule.lagrange[...]) == pytest.approx(2.5 + 1.0 + 2.0 * 21.25, rel=1e-5)
    learner.multiplier_update(jnp.asarray(0.0))  # D = 23.125, D₋₂ = 17.5 (the first update's)
    assert float(learner.rule.lagrange[...]) == pytest.approx(1.25 + 1.0 + 2.0 * 5.625, rel=1e-5)
    for _ in range(8):
        learner.multiplier_update(jnp.asarray(-0.25))  # J = 0: the integral hits 0, D falls, λ reaches 0
    assert float(learner.rule.integral[...]) == 0.0
    assert float(learner.rule.lagrange[...]) == 0.0


def test_ppo_pid_clips():
    unbounded = make(PPOPID, kp=1.0, lambda_max=2.0)  # sum_norm (OmniSafe's default): no λ_max clip
    unbounded.multiplier_update(jnp.asarray(1.0))
    assert float(unbounded.rule.lagrange[...]) > 2.0
    capped = make(PPOPID, kp=1.0, lambda_max=2.0, sum_norm=False)
    capped.multiplier_update(jnp.asarray(1.0))
    assert float(capped.rule.lagrange[...]) == pytest.approx(2.0)
    normed = make(PPOPID, kp=1.0, ki=1.0, diff_norm=True)  # I and λ in [0, 1]
    normed.multiplier_update(jnp.asarray(1.0))
    assert float(normed.rule.integral[...]) == 1.0 and float(normed.rule.lagrange[...]) == 1.0


def test_p3o_kappa_schedule():
    learner = make(P3O, kappa_init=0.01, kappa_factor=1.1, kappa_max=0.05)
    expected = 0.01
    for _ in range(30):
        learner.multiplier_update(jnp.asarray(0.1))
        expected = min(expected * 1.1, 0.05)
        assert float(learner.rule.kappa[...]) == pytest.approx(expected, rel=1e-4)
    assert float(learner.rule.kappa[...]) == pytest.approx(0.05)
    learner.multiplier_update(jnp.asarray(-0.1))
    assert float(learner.rule.kappa[...]) == pytest.approx(0.05 / 1.1, rel=1e-5)
    for _ in range(40):
        learner.multiplier_update(jnp.asarray(0.0))  # v == 0 counts as satisfied
    assert float(learner.rule.kappa[...]) == pytest.approx(0.01)


def test_p3o_relu_penalty_on_cost_surrogate_plus_episode_excess():
    learner = make(P3O, kappa_init=2.0, kappa_max=2.0, clip_epsilon=0.2)
    ratio, adv_r, adv_c = [1.5, 0.5], [1.0, -1.0], [1.0, 1.0]
    reward_surr = np.mean([1.2 * 1.0, 0.8 * -1.0])  # min(r A, clip(r) A)
    cost_surr = np.mean([1.5, 0.5])  # mean(r A_c), unclipped
    loss, aux = learner.policy_loss(batch(ratio, adv_r, adv_c, 0.001))  # J_c − d = T·v = 0.1
    assert float(aux["loss/p3o_penalty"]) == pytest.approx(cost_surr + 0.1)
    assert float(loss) == pytest.approx(-reward_surr + 2.0 * (cost_surr + 0.1), rel=1e-5)
    loss, aux = learner.policy_loss(batch(ratio, adv_r, adv_c, -0.05))  # J_c − d = −5: penalty inactive
    assert float(aux["loss/p3o_penalty"]) == 0.0
    assert float(loss) == pytest.approx(-reward_surr, rel=1e-5)


def test_p3o_penalty_reads_cost_advantages_in_cost_per_step():
    # with cost_advantage="standardize" the update multiplies the advantages back by cost_scale
    learner = make(P3O, kappa_init=1.0, kappa_max=1.0, cost_advantage="standardize")
    learner.policy_loss = lambda batch: (jnp.zeros(()), {"adv_c_max": jnp.max(batch.adv_c)})  # what the loss sees
    n = 64
    samples = {"obs": jnp.zeros((n, 3)), "u": jnp.zeros((n, 2)), "logp": jnp.zeros(n), "loc": jnp.zeros((n, 2)),
               "scale": jnp.ones((n, 2)), "adv_r": jnp.zeros(n), "adv_c": jnp.linspace(-1.0, 1.0, n),
               "target_r": jnp.zeros(n), "target_c": jnp.zeros(n)}
    optimizer = nnx.Optimizer(learner, __import__("optax").sgd(0.0), wrt=nnx.Param)
    metrics = learner.policy_update(optimizer, IterationBatch(samples, jnp.asarray(0.0), jnp.asarray(0.5)),
                                    jax.random.key(0))
    assert float(jnp.max(metrics["adv_c_max"])) == pytest.approx(0.5)


def test_focops_mixes_the_advantages_and_masks_its_loss():
    # FOCOPS mixes the advantages as PPO-Lag does: (Â_r − ν Â_c)/(1 + ν)
    learner = make(FOCOPS, lambda_init=0.5, focops_lambda=1.5, kl_delta=0.02)
    np.testing.assert_allclose(learner.advantage(jnp.asarray([1.0]), jnp.asarray([0.5]), jnp.asarray(0.0)),
                               [(1.0 - 0.25) / 1.5], rtol=1e-6)
    # its policy loss is the masked KL-regularized target on that mix (focops_loss's own equation:
    # test_losses_on_policy.py), with the fraction of states inside the trust region
    b = batch([1.0, 1.2, 0.9], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0], 0.0, kl=[0.0, 0.01, 0.05])
    loss, aux = learner.policy_loss(b)
    adv = np.asarray([1.0, 2.0, 3.0]) / 1.5
    per_state = np.asarray([0.0, 0.01, 0.05]) - np.asarray([1.0, 1.2, 0.9]) * adv / 1.5
    assert float(loss) == pytest.approx(np.mean(per_state * [1, 1, 0]), rel=1e-5)
    assert float(aux["policy/trust_region_fraction"]) == pytest.approx(2 / 3)


def test_focops_nu_by_the_lagrangian_rule():
    learner = make(FOCOPS, lambda_optimizer="sgd", lambda_init=0.1, lambda_lr=1.0, lambda_max=0.5)
    learner.multiplier_update(jnp.asarray(0.2))
    assert float(learner.rule.lagrange[...]) == pytest.approx(0.3)
    learner.multiplier_update(jnp.asarray(1.0))
    assert float(learner.rule.lagrange[...]) == pytest.approx(0.5)
    learner.multiplier_update(jnp.asarray(-2.0))
    assert float(learner.rule.lagrange[...]) == 0.0
    adam = make(FOCOPS)  # OmniSafe's: Adam at 0.035 on −ν·(J_c − d), from 0.001, capped at 2
    adam.multiplier_update(jnp.asarray(0.1))
    assert float(adam.rule.lagrange[...]) == pytest.approx(0.001 + 0.035, rel=1e-4)  # Adam's first step: lr · sign


def test_crpo_switches_between_reward_and_cost():
    learner = make(CRPO)
    adv_r, adv_c = jnp.asarray([1.0, -2.0]), jnp.asarray([3.0, 4.0])
    np.testing.assert_array_equal(learner.advantage(adv_r, adv_c, jnp.asarray(-0.1)), adv_r)
    np.testing.assert_array_equal(learner.advantage(adv_r, adv_c, jnp.asarray(0.0)), adv_r)
    np.testing.assert_array_equal(learner.advantage(adv_r, adv_c, jnp.asarray(0.1)), -adv_c)
    # OmniSafe's tolerance: the reward while the episode's excess T·v is at most `distance` (2)
    np.testing.assert_array_equal(learner.advantage(adv_r, adv_c, jnp.asarray(2.0 / EPISODE_LENGTH)), adv_r)
    np.testing.assert_array_equal(learner.advantage(adv_r, adv_c, jnp.asarray(2.1 / EPISODE_LENGTH)), -adv_c)
    no_tolerance = make(CRPO, distance=0.0)
    np.testing.assert_array_equal(no_tolerance.advantage(adv_r, adv_c, jnp.asarray(1.0 / EPISODE_LENGTH)), -adv_c)


def test_ppo_cost_reward_and_ppo_untouched():
    learner = make(PPOCost, cost_weight=2.0)
    np.testing.assert_allclose(learner.training_reward(jnp.asarray([1.0, 1.0]), jnp.asarray([0.0, 0.5])), [1.0, 0.0])
    np.testing.assert_allclose(make(PPO).training_reward(jnp.asarray(1.0), jnp.asarray(0.5)), 1.0)
    ppo = make(PPO, clip_epsilon=0.2)
    loss, _ = ppo.policy_loss(batch([1.5, 0.5], [1.0, -1.0], [9.0, 9.0], 1.0))
    assert float(loss) == pytest.approx(-np.mean([1.2, -0.8]))


class ScriptedCost(Wrapper):
    """The toy env with its cost replaced by a given sequence (indexed by the step counter) and reward 1."""

    def __init__(self, env, costs):
        super().__init__(env)
        self.costs = jnp.asarray(costs, jnp.float32)

    def step(self, state, action):
        t = state.info["steps"].astype(jnp.int32)
        state = self.env.step(state, action)
        return state.replace(cost=self.costs[t], reward=jnp.ones_like(state.reward))


def test_saute_budget_is_the_discounted_bound_and_penalises_while_negative():
    T, d, gamma = 10, 2.0, 0.9
    costs = [0.0, 0.5, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0, 0.0]
    env = SauteBudget(ScriptedCost(ToyEnv(episode_length=T), costs), safety_bound=d, discount=gamma, penalty=-3.0,
                      max_budget=1.0)
    d_gamma = d * (1 - gamma**T) / ((1 - gamma) * T)  # 2 · 0.6513 / 1 = 1.3026
    assert env.discounted_bound == pytest.approx(d_gamma)
    state = env.reset(jax.random.key(0))
    assert float(state.obs[-1]) == 1.0
    z, want_z, want_obs, want_r = 1.0, [], [], []
    for c in costs[:6]:
        z = (z - c / d_gamma) / gamma
        want_z.append(z)
        want_obs.append(min(max(z, 0.0), 1.0))
        want_r.append(-3.0 if z < 0 else 1.0)
    got_z, got_obs, got_r = [], [], []
    for _ in range(6):
        state = env.step(state, jnp.zeros(2))
        got_z.append(float(state.metrics["saute/budget"]))
        got_obs.append(float(state.obs[-1]))
        got_r.append(float(state.reward))
    np.testing.assert_allclose(got_z, want_z, rtol=1e-5)
    np.testing.assert_allclose(got_obs, want_obs, rtol=1e-5)
    np.testing.assert_allclose(got_r, want_r)
    # by hand: z = 1.111 (seen as 1.0), 0.808, 0.898, 0.998, then the cost of 1.5 makes it −0.1710: penalised
    # from there on, while the observation reads 0
    np.testing.assert_allclose(got_z[:5], [1.1111, 0.8081, 0.8979, 0.9976, -0.1710], atol=1e-4)
    assert got_obs[0] == 1.0 and got_obs[4:] == [0.0, 0.0]
    assert got_r[:4] == [1.0] * 4 and got_r[4:] == [-3.0, -3.0]
    # spending exactly d/T per step keeps z at 1 − (discounted cost so far)/d_γ: it reaches 0 at the last step
    even = SauteBudget(ScriptedCost(ToyEnv(episode_length=T), [d / T] * T), safety_bound=d, discount=gamma)
    state = even.reset(jax.random.key(0))
    for _ in range(T):
        state = even.step(state, jnp.zeros(2))
    assert float(state.metrics["saute/budget"]) == pytest.approx(0.0, abs=1e-5)


def test_ppo_saute_env_hook_keeps_true_episode_return():
    config = tiny(PPOSaute.Config, safety_bound=1.0)
    env = PPOSaute.wrap_env(EpisodeStats(ToyEnv(episode_length=4, hazard_y=-10.0)), config)
    state = env.reset(jax.random.key(0))
    for _ in range(4):
        state = env.step(state, jnp.asarray([1.0, 0.0]))
    assert float(state.reward) == pytest.approx(config.saute_penalty)
    assert float(state.metrics["episode/done"]) == 1.0
    assert float(state.metrics["episode/return"]) == pytest.approx(2.0, rel=1e-5)  # the task reward
    assert float(state.metrics["episode/cost"]) == 4.0
    assert PPO.wrap_env(env, config) is env


def test_multipliers_are_named_variables_outside_the_optimizer():
    learner = make(PPOPID)
    assert set(learner.multipliers()) == {"lagrange", "integral", "p_ema", "d_ema"}
    opt = nnx.Optimizer(learner, __import__("optax").sgd(1.0), wrt=nnx.Param)
    before = {k: float(v) for k, v in learner.multipliers().items()}
    grads = nnx.grad(lambda m: m.policy_loss(batch([1.0], [1.0], [1.0], 0.0))[0])(learner)
    opt.update(learner, grads)
    assert {k: float(v) for k, v in learner.multipliers().items()} == before
