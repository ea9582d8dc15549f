"""Safety-Gymnasium's Safe Multi-Agent MuJoCo velocity tasks (crax.tasks.multi_agent.make_ma) against data
recorded from its own ``make_ma`` (tools/safety_gymnasium/sg_multi_velocity_reference.py): every agent's
spaces, observation on hand-set states (gathered from qpos and qvel, no physics compiled), and rollouts'
per-agent rewards, costs and observations (HalfCheetah 2x3's |v_x| cost forward and backward, Swimmer's signed
v_x); the agent axis through the batched training stack."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.core.env import State, wrap_for_training
from crax.core.partition import SOURCES, Node, Partition, PartitionedEnv, Read
from crax.tasks.multi_agent import ma_ids, make_ma, make_ma_id
from tests.env import c_forward
from tests.env.safety_gym_reference import load

PAIRS = [tuple(name.split()) for name in load("safety_multi_velocity_reference.json")["tasks"]]
"""Every (scenario, agent_conf) Safety-Gymnasium's make_ma serves, as recorded."""
ROLLOUT_OBS_ATOL = {"HalfCheetah": 2.5e-2}
REWARD_ATOL = {"HalfCheetah": 5e-3}
HORIZON = {("HalfCheetah 2x3", "backward"): 5}
"""Steps compared (default: all); past step 5 of 2x3's ``backward`` a joint velocity parts by 5e-2 at a
contact, as the single-agent tests' horizons say of MuJoCo 2.3.3's contacts against MJX's."""
"""As the single-agent velocity tests' (tests/env/test_safety_velocity.py), where a foot meets the floor
(HalfCheetah's reward 1.4e-3 off at step 8 of ``forward``: MuJoCo 2.3.3's contact against MJX's)."""


def record(scenario: str, conf: str) -> dict[str, Any]:
    return load("safety_multi_velocity_reference.json")["tasks"][f"{scenario} {conf}"]


@pytest.fixture(scope="module")
def envs() -> dict[tuple[str, str], PartitionedEnv]:
    return {pair: make_ma(*pair) for pair in PAIRS}


@pytest.mark.parametrize("pair", PAIRS, ids=" ".join)
def test_agents_spaces_and_threshold_are_safety_gymnasiums(envs, pair):
    env, rec = envs[pair], record(*pair)
    assert list(env.agents) == rec["agents"]
    assert [rec["observation_spaces"][a]["shape"] for a in env.agents] == [[n] for n in env.observation_sizes]
    assert [rec["action_spaces"][a]["shape"] for a in env.agents] == [[n] for n in env.action_sizes]
    low, high = np.asarray(env.env.body.ctrl_range, np.float32).T  # crax's [-1, 1] maps onto the actuators' range
    for i, agent in enumerate(env.agents):
        actuators = env.partition.actuators(i)
        np.testing.assert_allclose(rec["action_spaces"][agent]["low"], low[actuators], err_msg=agent)
        np.testing.assert_allclose(rec["action_spaces"][agent]["high"], high[actuators], err_msg=agent)
    assert env.global_state_size == rec["state_size"]
    assert float(env.env.suite.constraints[0].threshold[...]) == pytest.approx(rec["threshold"])


@pytest.mark.parametrize("pair", PAIRS, ids=" ".join)
def test_observations_on_recorded_states(envs, pair):
    env, rec = envs[pair], record(*pair)
    for case in rec["states"]:
        rows = np.asarray(env.gather({name: case[name] for name in SOURCES if name in case}))
        for i, agent in enumerate(env.agents):
            n = env.observation_sizes[i]
            np.testing.assert_allclose(rows[i, :n], case["obs"][agent], rtol=1e-6, atol=1e-5, err_msg=agent)
            assert not rows[i, n:].any()  # the padding


HUMANOID_OBS = {"cinert": 45, "cvel": 185, "qfrc_actuator": 269, "cfrc_ext": 292}
"""Where Gymnasium's Humanoid-v4 observation (the global state) holds each array: after qpos[2:] (22) and qvel (23),
cinert 14 × 10, cvel 14 × 6, qfrc_actuator 23, cfrc_ext 14 × 6."""


def test_humanoid_body_reads_are_the_single_agent_observations(envs):
    """On a state through MuJoCo's mj_forward, each agent's cinert, cvel, qfrc_actuator and cfrc_ext entries (the
    last two as mj_rnePostConstraint leaves them, through crax.core.physics.post_constraint) are the entries of
    the single-agent observation (checked against Safety-Gymnasium's by tests/env/test_safety_velocity.py)."""
    env = envs[("Humanoid", "9|8")]
    case = record("Humanoid", "9|8")["states"][1]
    state = arrange(env, case)
    rows, full = np.asarray(state.obs), np.asarray(state.info["global_state"])
    checked = 0
    for i in range(env.num_agents):
        for j, r in enumerate(env.partition.reads(i, env.obsk)):
            if r.array in HUMANOID_OBS:
                index = r.index if r.array != "qfrc_actuator" else r.index % 23
                assert rows[i, j] == pytest.approx(full[HUMANOID_OBS[r.array] + index], rel=1e-5, abs=1e-5), (i, r)
                checked += 1
    assert checked > 300 and np.abs(rows[:, :]).max() > 0


def arrange(env: PartitionedEnv, case: dict[str, Any]) -> State:
    """The multi-agent state at a recorded (qpos, qvel), through MuJoCo's mj_forward."""
    inner = env.env
    data = inner.body.write_state(inner._data0, jnp.asarray(case["qpos"], jnp.float32),
                                  jnp.asarray(case["qvel"], jnp.float32))
    data = c_forward.forward(inner, data)
    shapes = inner.state_shapes
    zero = jnp.zeros((), jnp.float32)
    task = {"velocity": zero}
    ctx = inner._context(data, task, jnp.zeros(inner.action_size))
    state = State(data=data, obs=inner.suite.observe(ctx), reward=zero, cost=zero, done=zero, truncation=zero,
                  info={"task": task, "steps": jnp.zeros((), jnp.int32)},
                  metrics={k: jnp.zeros(v.shape, v.dtype) for k, v in shapes.metrics.items()})
    return env._agents_view(state)


@pytest.mark.slow
@pytest.mark.parametrize("pair", [("HalfCheetah", "2x3"), ("Swimmer", "2x1")], ids=" ".join)  # 6x1's rows: on states
def test_rollouts_per_agent_reward_cost_and_observation(envs, pair):
    env, rec = envs[pair], record(*pair)
    for name, case in rec["rollouts"].items():
        state = arrange(env, case)
        actions = {a: np.asarray(v, np.float32).reshape(-1, n)
                   for (a, v), n in zip(case["actions"].items(), env.action_sizes, strict=True)}
        for t, ref in enumerate(case["steps"][:HORIZON.get((" ".join(pair), name))]):
            state = env.step(state, env.stack({a: actions[a][t] for a in env.agents}))
            where = f"{name} step {t}"
            np.testing.assert_allclose(np.asarray(state.reward), ref["reward"], atol=REWARD_ATOL.get(pair[0], 1e-3),
                                       err_msg=where)
            np.testing.assert_array_equal(np.asarray(state.cost), ref["cost"], err_msg=where)
            assert [bool(state.done)] * env.num_agents == ref["terminated"], where
            for agent, obs in env.split(np.asarray(state.obs), env.observation_sizes).items():
                np.testing.assert_allclose(obs, ref["obs"][agent], atol=ROLLOUT_OBS_ATOL.get(pair[0], 5e-3),
                                           err_msg=f"{where} {agent}")
        if pair[0] == "HalfCheetah":  # |v_x| > τ: running backwards at 2τ costs as running forwards
            assert case["steps"][0]["cost"] == [1.0] * env.num_agents


def test_the_batched_stack_keeps_the_agent_axis():
    env = make_ma("Swimmer", "2x1", episode_length=3)  # the cheapest body to compile: no contacts
    batched = wrap_for_training(env, 4)
    state = jax.jit(batched.reset)(jax.random.key(0))
    step = jax.jit(batched.step)
    for _ in range(3):
        state = step(state, jnp.zeros((4, 2, 1)))
    assert state.obs.shape == (4, 2, 6) and state.reward.shape == (4, 2) and state.cost.shape == (4, 2)
    assert state.info["global_state"].shape == (4, 8)
    assert state.metrics["episode/return"].shape == (4, 2)
    np.testing.assert_array_equal(state.metrics["episode/done"], np.ones(4))  # the 3-step episodes ended
    returns = np.asarray(state.metrics["episode/return"])
    np.testing.assert_array_equal(returns[:, 0], returns[:, 1])  # a team reward
    with pytest.raises(ValueError, match=r"expected \(4, 2, 1\) \(num_envs, agents, action_size\)"):
        batched.step(state, jnp.zeros((4, 2)))


def test_actions_scatter_into_the_body_by_partition():
    """Ant 2x4: agent_0 drives hip1, ankle1, hip2, ankle2 (Ant-v4's actuators 2-5), agent_1 hip3, ankle3, hip4,
    ankle4 (6, 7, 0, 1); 4x2's agent_3 drives hip4 and ankle4 (0, 1)."""
    env = make_ma("Ant", "2x4")
    body_action = np.asarray(env.stack({"agent_0": [1.0, 2, 3, 4], "agent_1": [5.0, 6, 7, 8]}).reshape(-1)[env._action_index])
    np.testing.assert_array_equal(body_action, [7, 8, 1, 2, 3, 4, 5, 6])
    four = make_ma("Ant", "4x2")
    rows = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(rows.reshape(-1)[four._action_index], [6, 7, 0, 1, 2, 3, 4, 5])


def test_observation_graph_depth_and_padding():
    """A three-node chain a-b-c split as (a), (b, c): with obsk 0 each agent reads its own qpos and qvel; with
    obsk 1 agent 0 adds b's qpos; the global node's qpos then qvel close each row; rows are zero-padded."""
    nodes = {"a": Node("a", (Read("qpos", 0),), (Read("qvel", 0),), 0),
             "b": Node("b", (Read("qpos", 1),), (Read("qvel", 1, clip=0.5),), 1),
             "c": Node("c", (Read("qpos", 2),), (Read("qvel", 2),), 2),
             "g": Node("g", (Read("qpos", -1),), ())}
    part = Partition(nodes, (("a", "b"), ("b", "c")), ("g",), (("a",), ("b", "c")))
    assert [r.index for r in part.reads(0, 0)] == [0, 0, -1]
    assert [(r.array, r.index) for r in part.reads(0, 1)] == [("qpos", 0), ("qvel", 0), ("qpos", 1), ("qpos", -1)]
    assert [(r.array, r.index) for r in part.reads(1, 2)] == [
        ("qpos", 1), ("qvel", 1), ("qpos", 2), ("qvel", 2), ("qpos", 0), ("qpos", -1)]


def test_bad_input_names_the_choices():
    with pytest.raises(ValueError, match="unknown multi-agent scenario 'Reacher'; valid choices: HalfCheetah, Ant, Hopper, "
                                         "Swimmer, Walker2d, Humanoid"):
        make_ma("Reacher", "2x1")
    with pytest.raises(ValueError, match="unknown agent_conf '3x2' for HalfCheetah; valid choices: 2x3, 6x1"):
        make_ma("HalfCheetah", "3x2")
    with pytest.raises(ValueError, match="unknown parameter.*wind.*valid parameters: velocity_threshold"):
        make_ma("Swimmer", "2x1", wind=1.0)
    with pytest.raises(ValueError, match="valid ids: SafetyMAHalfCheetah2x3Velocity-v0"):
        make_ma_id("SafetyMAHalfCheetah9Velocity-v0")
    assert len(ma_ids()) == 9 and ma_ids()["SafetyMAHumanoid9-8Velocity-v0"] == ("Humanoid", "9|8")
