"""The shield (crax/learners/shared/shield.py): a look-ahead in the env's own model that replaces an
action predicting cost, on the toy env (cost 1 while y > 0.2; an action moves the point by 0.1·a), in
the trainers of both families, and near a hazard of PointGoal1 (slow: its compile takes minutes)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.core.early_termination import EarlyTermination
from crax.core.env import Env, EpisodeStats, PackedState, State, Wrapper
from crax.learners import PPO, SACLag, make_trainer
from crax.learners.shared.shield import METRICS, Shield, halton, shield
from tests.learners.conftest import tiny
from tests.learners.test_off_policy import small
from tests.learners.toy_env import ToyEnv

UP = jnp.asarray([0.0, 1.0])


def at(env: Env, x: float, y: float, steps: float = 0.0) -> State:
    """A state of the toy env (under any wrappers) with the point at ``(x, y)``, ``steps`` into its episode."""
    state = env.reset(jax.random.key(0))
    pos = jnp.asarray([x, y], jnp.float32)
    return state.replace(data={"pos": pos}, obs=pos, info={**state.info, "steps": jnp.asarray(steps, jnp.float32)})


def chain(env: Env) -> list[type]:
    """The wrapper types from ``env`` down to the task."""
    out = [type(env)]
    while isinstance(env, Wrapper):
        env = env.env
        out.append(type(env))
    return out


def test_an_action_entering_the_hazard_within_the_horizon_is_replaced_by_the_nearest_safe_candidate():
    env = Shield(ToyEnv(), horizon=2)
    # from y = 0.05, (0, 1) held costs on its second step (y = 0.25); halved it stays at y <= 0.15, and is the
    # cost-free candidate nearest the proposed action (the zero action, also free, is farther)
    state = jax.jit(env.step)(at(env, 0.0, 0.05), UP)
    assert float(state.metrics["shield/intervened"]) == 1 and float(state.metrics["shield/predicted_cost"]) == 1
    np.testing.assert_allclose(state.obs, [0.0, 0.1], atol=1e-6)
    assert float(state.cost) == 0 and float(state.reward) == pytest.approx(0.25)  # the real step's, with (0, 0.5)
    # from y = 0.15 the proposed action costs at once (unshielded: cost 1); halved it costs a step later; the
    # zero action is the nearest that costs nothing
    assert float(ToyEnv().step(at(ToyEnv(), 0.0, 0.15), UP).cost) == 1
    state = jax.jit(env.step)(at(env, 0.0, 0.15), UP)
    assert float(state.metrics["shield/intervened"]) == 1 and float(state.metrics["shield/predicted_cost"]) == 2
    np.testing.assert_allclose(state.obs, [0.0, 0.15], atol=1e-6)
    assert float(state.cost) == 0 and float(state.reward) == 0


def test_a_safe_action_passes_unchanged_and_the_state_is_the_unshielded_step():
    plain, env = ToyEnv(), Shield(ToyEnv(), horizon=3)
    action = jnp.asarray([0.3, 0.2])
    state = jax.jit(env.step)(at(env, 0.1, -0.5), action)
    assert float(state.metrics["shield/intervened"]) == 0 and float(state.metrics["shield/predicted_cost"]) == 0
    expected = plain.step(at(plain, 0.1, -0.5), action)
    got = state.replace(metrics={k: v for k, v in state.metrics.items() if k not in METRICS})
    jax.tree.map(np.testing.assert_array_equal, got, expected)


def test_an_action_no_candidate_improves_on_is_kept():
    env = Shield(ToyEnv(hazard_y=-10.0), horizon=2)  # every step costs 1, whatever the action
    state = env.step(at(env, 0.0, 0.0), UP)
    assert float(state.metrics["shield/intervened"]) == 0 and float(state.metrics["shield/predicted_cost"]) == 2
    np.testing.assert_allclose(state.obs, [0.0, 0.1], atol=1e-6)


def test_the_look_ahead_stops_at_the_end_of_the_episode():
    env = Shield(ToyEnv(episode_length=2), horizon=3)
    # one step left: (0, 1) ends the episode at y = 0.15, before it would cost
    state = env.step(at(env, 0.0, 0.05, steps=1.0), UP)
    assert float(state.metrics["shield/predicted_cost"]) == 0 and float(state.metrics["shield/intervened"]) == 0
    assert float(state.done) == 1


def test_the_fallback_zero_predicts_the_proposed_action_then_a_stop():
    env = Shield(ToyEnv(), horizon=3, fallback="zero")
    state = env.step(at(env, 0.0, 0.05), UP)  # held, (0, 1) would cost from its second step; stopped, never
    assert float(state.metrics["shield/intervened"]) == 0 and float(state.metrics["shield/predicted_cost"]) == 0


def test_the_candidates_are_a_fixed_set():
    env = Shield(ToyEnv(), horizon=1, candidates=8)
    a = jnp.asarray([0.4, -0.8])
    alts = np.asarray(env.alternatives(a))
    assert alts.shape == (8, 2)
    np.testing.assert_allclose(alts[:3], [[0, 0], [0.2, -0.4], [-0.4, 0.8]], atol=1e-7)
    np.testing.assert_allclose(alts[3:], 2 * halton(5, 2) - 1, atol=1e-6)
    np.testing.assert_allclose(halton(3, 2), [[0.5, 1 / 3], [0.25, 2 / 3], [0.75, 1 / 9]])
    assert (np.abs(alts) <= 1).all()
    np.testing.assert_array_equal(Shield(ToyEnv(), horizon=1, candidates=1).alternatives(a), [[0, 0]])


def test_episode_statistics_count_the_real_steps_only():
    env = shield(EpisodeStats(ToyEnv(episode_length=4)), horizon=3)
    assert chain(env) == [EpisodeStats, Shield, ToyEnv]
    state = at(env, 0.0, 0.0)
    step = jax.jit(env.step)
    rewards, costs, intervened = [], [], []
    for _ in range(4):
        state = step(state, UP)
        rewards.append(float(state.reward))
        costs.append(float(state.cost))
        intervened.append(float(state.metrics["shield/intervened"]))
    assert any(intervened) and float(state.metrics["episode/done"]) == 1
    assert float(state.metrics["episode/length"]) == 4  # not 4 × (1 + (1 + 8) × 3)
    assert float(state.metrics["episode/return"]) == pytest.approx(sum(rewards))
    assert float(state.metrics["episode/cost"]) == sum(costs) == 0


def test_bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="horizon of at least one env step"):
        Shield(ToyEnv(), horizon=-1)
    with pytest.raises(ValueError, match="horizon 0 means no shield"):
        Shield(ToyEnv(), horizon=0)
    with pytest.raises(ValueError, match="at least one candidate"):
        Shield(ToyEnv(), horizon=2, candidates=0)
    with pytest.raises(ValueError, match="'hold' or 'zero'"):
        Shield(ToyEnv(), horizon=2, fallback="brake")  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="shield_horizon"):
        tiny(PPO.Config, shield_horizon=-1)
    with pytest.raises(ValueError, match="shield_candidates"):
        tiny(PPO.Config, shield_horizon=2, shield_candidates=0)


def test_the_trainer_shields_training_and_evaluation_under_the_episode_statistics():
    plain = make_trainer(PPO, tiny(PPO.Config), ToyEnv())
    assert Shield not in chain(plain.train_env) and Shield not in chain(plain.eval_env)
    trainer = make_trainer(PPO, tiny(PPO.Config, shield_horizon=2, early_termination=True), ToyEnv())
    assert chain(trainer.train_env)[2:] == [EpisodeStats, EarlyTermination, Shield, PackedState, ToyEnv]
    assert chain(trainer.eval_env)[1:] == [EpisodeStats, Shield, PackedState, ToyEnv]


@pytest.mark.parametrize("cls", [PPO, SACLag], ids=lambda c: c.name)
def test_a_learner_trains_and_evaluates_through_the_shield(cls):
    config = (tiny(PPO.Config, shield_horizon=2) if cls is PPO else small(SACLag, shield_horizon=2))
    trainer = make_trainer(cls, config, ToyEnv())
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 2)
    metrics = jax.device_get(metrics)
    for k, v in metrics.items():
        assert np.isfinite(v).all(), k
    rate = np.asarray(metrics["shield/intervened"])
    assert rate.shape == (1, 2) and ((rate >= 0) & (rate <= 1)).all() and rate.max() > 0
    assert "shield/predicted_cost" in metrics
    ev = jax.device_get(trainer.evaluate(state, jax.random.key(1)))
    assert np.isfinite(ev["stochastic"]["return"]).all()


@pytest.mark.slow
def test_the_shield_turns_pointgoal1s_robot_away_from_a_hazard_ahead():
    import crax
    from crax.suites.task_env import TaskEnv

    env = crax.make("PointGoal1")
    assert isinstance(env, TaskEnv)
    body = env.body
    horizon = 3
    shielded = Shield(env, horizon=horizon)
    step, shielded_step = jax.jit(env.step), jax.jit(shielded.step)
    forward = jnp.asarray([1.0, 0.0])
    xy = lambda s: np.asarray(body.position(s.data)[:2])  # noqa: E731
    state = jax.jit(env.reset)(jax.random.key(0))
    far = jnp.full_like(state.info["task"]["cylinder_zones"], 50.0)  # no hazard anywhere near

    def with_zones(s: State, zones: jax.Array) -> State:
        return s.replace(info={**s.info, "task": {**s.info["task"], "cylinder_zones": zones}})

    state = with_zones(state, far)
    for _ in range(5):  # under way
        state = step(state, forward)
    ahead = state
    for _ in range(horizon):
        ahead = step(ahead, forward)
    start, end = xy(state), xy(ahead)
    heading = (end - start) / np.linalg.norm(end - start)
    # a hazard (radius 0.4) whose edge the robot, driving on, crosses within the horizon but not on this step
    state = with_zones(state, far.at[0].set(jnp.asarray(end + 0.35 * heading)))
    plain = step(state, forward)
    assert float(plain.cost) == 0
    shielded_state = shielded_step(state, forward)
    assert float(shielded_state.metrics["shield/predicted_cost"]) > 0
    assert float(shielded_state.metrics["shield/intervened"]) == 1
    assert float(shielded_state.cost) == 0
    assert not np.allclose(xy(shielded_state), xy(plain))  # another action moved the robot
