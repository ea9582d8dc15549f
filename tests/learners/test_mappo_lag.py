"""MAPPO-Lag (crax.learners.on_policy.mappo_lag): the shared actor on each agent's row and one-hot id, fixed
Gaussians on padded action entries, one probability ratio per agent, the team's advantage; the team view
of a multi-agent env; training end to end on a two-agent toy team (the Safe MaMuJoCo tasks' own checks are
tests/env/test_safety_multi_velocity.py's; `crax train mappo-lag --env SafetyMASwimmer2x1Velocity-v0` runs them)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.core.partition import PartitionedEnv
from crax.learners import MAPPOLag, Trainer
from crax.learners.shared.networks import gaussian_log_prob
from crax.runs import make_env
from tests.learners.toy_env import ToyEnv
from tests.learners.toy_team_env import ToyTeamEnv

LAYOUT = (3, 4, 2, 5)  # 3 agents, 4-entry observation rows, 2-entry action rows, a 5-entry global state
SIZES = (2, 1, 2)  # agent_1 has one action entry: its second is padding
SMALL = dict(actor_hidden=(8,), critic_hidden=(8,), num_envs=4, batch_size=4, num_minibatches=2, unroll_length=8,
             num_epochs=1, eval_envs=2, num_evals=1)


def learner() -> MAPPOLag:
    config = MAPPOLag.Config(agent_layout=LAYOUT, agent_action_sizes=SIZES, normalize_observations=False, **SMALL)
    return MAPPOLag(config, 3 * 4 + 5, 2, 16, rngs=nnx.Rngs(0))


def test_the_shared_actor_reads_each_agents_row_and_id():
    mappo = learner()
    obs = jnp.concatenate([jnp.tile(jnp.arange(4.0), 3), jnp.zeros(5)])[None]  # every agent sees the same row
    loc, scale = mappo.policy(obs)
    assert loc.shape == scale.shape == (1, 6)
    per_agent = np.asarray(loc).reshape(3, 2)
    assert not np.allclose(per_agent[0], per_agent[2])  # the one-hot ids tell the agents apart
    assert per_agent[1, 1] == 0.0 and float(scale.reshape(3, 2)[1, 1]) == 1.0  # the padded entry: fixed
    changed = obs.at[0, 4:8].set(9.0)  # agent_1's row only
    moved = np.abs(np.asarray(mappo.policy(changed)[0]) - np.asarray(loc)).reshape(3, 2) > 1e-7
    assert moved[1, 0] and not moved[0].any() and not moved[2].any()


def test_one_ratio_per_agent_over_its_own_entries():
    mappo = learner()
    key = jax.random.key(1)
    u, loc_old, loc_new = (jax.random.normal(k, (5, 6)) for k in jax.random.split(key, 3))
    scale = jnp.full((5, 6), 0.7)
    loc_new = loc_new.at[:, 3].set(loc_old[:, 3])  # agent_1's padded entry: the same fixed Gaussian
    mb = {"u": u, "loc": loc_old, "scale": scale, "logp": gaussian_log_prob(u, loc_old, scale)}
    ratio = mappo.probability_ratio(mb, loc_new, scale)
    assert ratio.shape == (5, 3)
    for i in range(3):
        own = slice(2 * i, 2 * i + 2)
        expected = jnp.exp(gaussian_log_prob(u[:, own], loc_new[:, own], scale[:, own])
                           - gaussian_log_prob(u[:, own], loc_old[:, own], scale[:, own]))
        np.testing.assert_allclose(ratio[:, i], expected, rtol=1e-5)
    assert mappo.advantage(jnp.ones(5), jnp.zeros(5), jnp.zeros(())).shape == (5, 1)  # meets the (B, agents) ratio


def test_a_single_agent_env_is_a_clear_error():
    with pytest.raises(ValueError, match="mappo-lag trains on a multi-agent env|a multi-agent learner trains on a multi-agent env"):
        Trainer(MAPPOLag, MAPPOLag.Config(**SMALL), ToyEnv())


def test_multi_agent_ids_build_through_make_env():
    env = make_env("SafetyMASwimmer2x1Velocity-v0", {"episode_length": 8})
    assert isinstance(env, PartitionedEnv) and env.agents == ("agent_0", "agent_1") and env.episode_length == 8


def test_trains_on_a_two_agent_team():
    """Two iterations on the toy env split between two agents (tests/learners/toy_team_env.py): the layout comes
    from the env, the actor moves, the metrics are finite, both policies evaluate."""
    config = MAPPOLag.Config(total_steps=2 * 4 * 8 * 2, safety_bound=1.0, **SMALL)
    trainer = Trainer(MAPPOLag, config, ToyTeamEnv())
    assert trainer.config.agent_layout == (2, 2, 1, 2) and trainer.config.agent_action_sizes == (1, 1)
    state = trainer.init(jax.random.key(0))
    before = jax.tree.map(np.asarray, nnx.state(trainer.learner(state).actor, nnx.Param))
    state, metrics = trainer.run(state, 2)
    assert not np.asarray(metrics["train/nonfinite"]).any()
    assert np.asarray(metrics["episode/count"]).sum() > 0  # 16-step episodes ended
    after = jax.tree.map(np.asarray, nnx.state(trainer.learner(state).actor, nnx.Param))
    assert any(not np.allclose(a, b) for a, b in zip(jax.tree.leaves(before), jax.tree.leaves(after), strict=True))
    result = trainer.evaluate(state, jax.random.key(1))
    assert np.isfinite(np.asarray(result["deterministic"]["return"])).all()
