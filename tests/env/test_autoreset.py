"""The training stack on PointGoal1 (``episode_length=7``): auto-reset with a fresh layout, the
pre-reset observation in ``info["final_obs"]``, episode statistics, a ``jit(vmap)`` rollout that
stays finite, and the packed physics state (``PackedState``) stepping exactly as the scene's
``Data`` does. One compiled program: a scanned ``wrap_for_training`` rollout beside the same stack
without ``PackedState``.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import crax
from crax.core.env import AutoReset, EpisodeStats, PackedState, Vmap
from crax.core.physics_model import STATE_FIELDS, field_name
from crax.objects.walls import wall_points
from crax.sensors import pseudo_lidar
from tests.env.conftest import POINT_GOAL1, compiled

HAZARD_LIDAR = slice(28, 44)

# ---------------------------------------------------------------------------------------------
# Auto-reset and episode statistics: one scanned rollout of the training stack.

N_ENVS, T = 3, 16


@functools.cache
def rollout():
    env = compiled("PointGoal1", **POINT_GOAL1).env
    wrapped = crax.wrap_for_training(env, N_ENVS)
    plain = AutoReset(Vmap(EpisodeStats(env), N_ENVS))  # the scene's Data in the carry
    unpack = jax.vmap(env.physics_model.unpack)

    def layout(task):
        return {k: v for k, v in task.items() if k != "key"}

    @jax.jit
    def run(key):
        k0, k1 = jax.random.split(key)
        state = wrapped.reset(k0)
        first = {"obs": state.obs, "task": layout(state.info["task"]), "qpos": state.data.physics.qpos,
                 "qvel": state.data.physics.qvel}

        def body(states, k):
            state, plain_state = states
            action = jax.random.uniform(k, (N_ENVS, env.action_size), minval=-1.0, maxval=1.0)
            nxt = wrapped.step(state, action)
            plain_nxt = plain.step(plain_state, action)
            out = {
                "obs_before": state.obs, "task_before": layout(state.info["task"]),
                "obs": nxt.obs, "final_obs": nxt.info["final_obs"], "task": layout(nxt.info["task"]),
                "reward": nxt.reward, "cost": nxt.cost, "done": nxt.done, "truncation": nxt.truncation,
                "metrics": nxt.metrics, "steps": nxt.info["steps"], "qpos": nxt.data.physics.qpos,
                "qpos_before": state.data.physics.qpos, "scene": unpack(nxt.data),
                "plain": {"obs": plain_nxt.obs, "final_obs": plain_nxt.info["final_obs"], "reward": plain_nxt.reward,
                          "cost": plain_nxt.cost, "done": plain_nxt.done, "scene": plain_nxt.data},
            }
            return (nxt, plain_nxt), out

        _, traj = jax.lax.scan(body, (state, plain.reset(k0)), jax.random.split(k1, T))
        return first, traj

    first, traj = run(jax.random.key(3))
    return env, jax.tree.map(np.asarray, first), jax.tree.map(np.asarray, traj)


@pytest.mark.slow
def test_rollout_is_finite_and_shaped():
    _, first, traj = rollout()
    assert first["obs"].shape == (N_ENVS, 62)
    assert traj["obs"].shape == (T, N_ENVS, 62)
    for k in ("obs", "final_obs", "reward", "cost"):
        assert np.all(np.isfinite(traj[k])), k
    assert np.all(traj["cost"] >= 0)
    costs = sum(v for k, v in traj["metrics"].items() if k.startswith("cost/"))
    np.testing.assert_allclose(traj["cost"], costs, rtol=1e-6)
    rewards = traj["metrics"]["reward/distance"] + traj["metrics"]["reward/goal"]
    np.testing.assert_allclose(traj["reward"], rewards, rtol=1e-5, atol=1e-7)
    assert np.any(traj["reward"] != 0)


def test_the_packed_state_steps_as_the_scenes_data():
    """The stack with PackedState and the same stack carrying the scene's Data give the same
    trajectories, resets included; the packed state carries MuJoCo's state and the fields the step
    reads (PointGoal1: xpos, for the distance before the step) and unpacks to those of the scene's
    Data bit for bit."""
    env, _, traj = rollout()
    plain = traj["plain"]
    for k in ("obs", "final_obs", "reward", "cost", "done"):
        np.testing.assert_array_equal(traj[k], plain[k], err_msg=k)
    assert env.step_reads == {"xpos"}
    carried = STATE_FIELDS | env.step_reads
    paths = jax.tree_util.tree_flatten_with_path(plain["scene"])[0]
    compared = 0
    for (path, want), got in zip(paths, jax.tree.leaves(traj["scene"]), strict=True):
        if field_name(path) in carried:
            np.testing.assert_array_equal(got, want, err_msg=jax.tree_util.keystr(path))
            compared += 1
    assert compared == len(carried & {field_name(p) for p, _ in paths}) >= 10
    packed = jax.eval_shape(crax.wrap_for_training(env, N_ENVS).reset, jax.random.key(0)).data.physics
    assert {field_name(p) for p, _ in jax.tree_util.tree_flatten_with_path(packed)[0]} == carried & {
        field_name(p) for p, _ in paths}


def test_autoreset_truncates_every_seven_steps():
    _, _, traj = rollout()
    ends = np.zeros((T, N_ENVS))
    ends[[6, 13]] = 1.0
    np.testing.assert_array_equal(traj["done"], ends)
    np.testing.assert_array_equal(traj["truncation"], ends)  # a Point never terminates
    np.testing.assert_array_equal(traj["metrics"]["episode/done"], ends)
    # the step counter restarts with the new episode
    np.testing.assert_array_equal(traj["steps"][:, 0], [1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2])


def test_episode_stats_equal_sums_over_the_finished_episode():
    _, _, traj = rollout()
    m = traj["metrics"]
    for start, end in [(0, 6), (7, 13)]:
        np.testing.assert_allclose(m["episode/return"][end], traj["reward"][start : end + 1].sum(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m["episode/cost"][end], traj["cost"][start : end + 1].sum(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(m["episode/length"][end], 7.0)
        np.testing.assert_array_equal(m["episode/cost_peak"][end], traj["cost"][start : end + 1].max(0))
    not_end = traj["done"] == 0
    for k in ("episode/return", "episode/cost", "episode/length", "episode/cost_peak"):
        assert np.all(m[k][not_end] == 0), k


def test_autoreset_draws_a_fresh_layout_and_keeps_final_obs():
    env, first, traj = rollout()
    suite = env.suite
    done = traj["done"] > 0
    # final_obs is the pre-reset observation: it differs from the new episode's where done, equals it elsewhere
    assert np.all(np.any(traj["final_obs"][done] != traj["obs"][done], axis=-1))
    np.testing.assert_array_equal(traj["final_obs"][~done], traj["obs"][~done])
    # hazards are fixed within an episode, new after each reset, and differ between envs
    zones = traj["task"]["cylinder_zones"]
    before = traj["task_before"]["cylinder_zones"]
    for t in range(T):
        same = np.all(zones[t] == before[t], axis=(-1, -2))
        np.testing.assert_array_equal(same, ~done[t])
    assert not np.allclose(first["task"]["cylinder_zones"][0], first["task"]["cylinder_zones"][1])
    # every layout drawn keeps the agent clear of the hazards and of the goal
    layouts = [(first["qpos"][:, :2], first["task"])] + [
        (traj["qpos"][t][:, :2], jax.tree.map(lambda x, t=t: x[t], traj["task"])) for t in (6, 13)
    ]
    for agent, task in layouts:
        d = np.linalg.norm(task["cylinder_zones"] - agent[:, None], axis=-1)
        assert np.all(d >= suite.agent_keepout + suite.hazards["cylinder_zones"].keepout - 1e-5)
        d = np.linalg.norm(task["goal"] - agent[:, None], axis=-1)
        assert np.all(d >= suite.agent_keepout + suite.props["goal"].keepout - 1e-5)
        np.testing.assert_array_equal(task["hazards"], task["cylinder_zones"])
    # the goal moved at every reset too
    for t in (6, 13):
        assert np.all(np.any(traj["task"]["goal"][t] != traj["task_before"]["goal"][t], axis=(-1, -2)))
    # Point reset noise: +-0.005 on the joint velocities
    assert np.all(np.abs(first["qvel"]) <= 0.005 + 1e-7) and np.any(first["qvel"] != 0)


def sensed(hazards, agent_xy):
    """What the hazard lidar sees: the hazards and the walls' points nearest the agent (SPEC decision 54)."""
    return np.concatenate([hazards, np.asarray(wall_points(agent_xy, 3.0))])


def test_reset_observation_belongs_to_the_new_layout():
    _, _, traj = rollout()
    for t in (6, 13):
        for i in range(N_ENVS):
            new = pseudo_lidar(traj["qpos"][t, i, :2], traj["qpos"][t, i, 2],
                               sensed(traj["task"]["hazards"][t, i], traj["qpos"][t, i, :2]), num_bins=16, max_dist=3.0)
            np.testing.assert_allclose(traj["obs"][t, i, HAZARD_LIDAR], np.asarray(new), atol=1e-5)
            # final_obs saw the old layout from about where the agent was one step (0.08 s) earlier
            old = pseudo_lidar(traj["qpos_before"][t, i, :2], traj["qpos_before"][t, i, 2],
                               sensed(traj["task_before"]["hazards"][t, i], traj["qpos_before"][t, i, :2]),
                               num_bins=16, max_dist=3.0)
            final = traj["final_obs"][t, i, HAZARD_LIDAR]
            to_old, to_new = np.linalg.norm(final - np.asarray(old)), np.linalg.norm(final - np.asarray(new))
            assert to_old < 0.5 * to_new, (to_old, to_new)


# ---------------------------------------------------------------------------------------------
# The reset pool: when it is refilled changes nothing in the trajectories.


def test_reset_pool_refill_timing_leaves_trajectories_unchanged():
    """Envs finishing a few at a time (random episode ends of a toy env) give exactly the same
    trajectory whether the pool is refilled on every step with a finished env (``refill_at=1``),
    only when a finishing env's slot is used (``refill_at=n``), or in between; and each new episode
    starts from ``reset(split(key)[1])`` of the env's auto-reset key before the step."""
    from tests.learners.toy_env import ToyEnv

    n, steps = 16, 40
    env = EpisodeStats(ToyEnv(episode_length=5))

    def run(refill_at):
        wrapped = AutoReset(Vmap(env, n), refill_at=refill_at)

        @jax.jit
        def go(key):
            k0, k1 = jax.random.split(key)
            state = wrapped.reset(k0)
            # desynchronise the episodes: env i has already run i % 5 steps
            state = state.replace(info={**state.info, "steps": jax.numpy.arange(n, dtype=jax.numpy.float32) % 5})

            def body(s, k):
                a = jax.random.uniform(k, (n, 2), minval=-1.0, maxval=1.0)
                before = s.info["autoreset_key"]
                s = wrapped.step(s, a)
                expected = jax.vmap(env.reset)(jax.vmap(jax.random.split)(before)[:, 1]).obs
                return s, (s.obs, s.done, s.metrics["episode/return"], jax.random.key_data(s.info["autoreset_key"]),
                           expected, s.info["autoreset_ready"])

            return jax.lax.scan(body, state, jax.random.split(k1, steps))[1]

        return jax.tree.map(np.asarray, go(jax.random.key(0)))

    eager, lazy = run(1), run(n)
    done = eager[1] > 0
    assert np.all(done.sum(axis=1) > 0) and np.all(done.sum(axis=1) < n)  # a few envs finish on every step
    for other in (lazy, run(5)):
        np.testing.assert_array_equal(other[1], eager[1])
        np.testing.assert_array_equal(other[0], eager[0])
        np.testing.assert_array_equal(other[2], eager[2])
        np.testing.assert_array_equal(other[3], eager[3])
    np.testing.assert_array_equal(eager[0][done], eager[4][done])  # the new episode's first observation
    assert not lazy[5].all(axis=1).all()  # the lazy pool did run with used slots
    assert eager[5][~done].all()  # refill_at=1: every slot not just taken is ready after the step


def test_refill_at_must_be_positive():
    from crax.core.env import AutoReset, Vmap
    from tests.learners.toy_env import ToyEnv

    with pytest.raises(ValueError, match="refill_at must be >= 1"):
        AutoReset(Vmap(ToyEnv(episode_length=5), 4), refill_at=0)


def test_packed_state_passes_an_env_without_a_physics_model_through():
    from tests.learners.toy_env import ToyEnv

    env = ToyEnv(episode_length=5)
    wrapped = PackedState(env)
    assert wrapped.model is None
    key = jax.random.key(0)
    state = wrapped.reset(key)
    np.testing.assert_array_equal(np.asarray(state.obs), np.asarray(env.reset(key).obs))
    action = np.zeros(env.action_size, np.float32)
    np.testing.assert_array_equal(np.asarray(wrapped.step(state, action).obs), np.asarray(env.step(state, action).obs))


def test_packed_and_scene_states_are_not_mixed_up():
    env = compiled("PointGoal1", **POINT_GOAL1).env
    action = np.zeros(env.action_size, np.float32)
    with pytest.raises(TypeError, match="PackedData"):
        PackedState(env).step(env.state_shapes, action)
    packed = env.state_shapes.replace(data=jax.eval_shape(env.physics_model.pack, env.state_shapes.data))
    with pytest.raises(TypeError, match="step it through crax.core.env.PackedState"):
        env.step(packed, action)
