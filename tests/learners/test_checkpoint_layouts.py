"""crax/runs/checkpoint_layouts.py: checkpoints written before decision 73 (the scene's ``Data`` in the
env states) or 74 (the physics model's whole ``Data``) load into today's packed layout, bit for bit.

A state of PointGoal1's trainer (two seeds, auto-reset pool included) is stored as the old stack stored
it (every ``PackedData`` unpacked to the scene's ``Data``); read back with the upgrade it equals the
state it came from; without it, loading names the mismatch. A curriculum run's upgrade picks the stage
whose scene fits, and a run without a physics model has no upgrade.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import crax
from crax.core.physics_model import PackedData
from crax.learners import PPOLag, Trainer
from crax.runs import checkpoint as ckpt
from crax.runs import checkpoint_layouts
from tests import trees
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv


def _filled(abstract, key):
    """Concrete values for an abstract state: random floats, zero integers and flags, fresh PRNG keys."""
    leaves, treedef = jax.tree.flatten(abstract)
    keys = jax.random.split(key, len(leaves))
    out = []
    for leaf, k in zip(leaves, keys, strict=True):
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            out.append(jax.random.split(k, leaf.shape) if leaf.shape else k)
        elif jnp.issubdtype(leaf.dtype, jnp.floating):
            out.append(jax.random.normal(k, leaf.shape, leaf.dtype))
        else:
            out.append(jnp.zeros(leaf.shape, leaf.dtype))
    return jax.tree.unflatten(treedef, out)


def _old_layout(env, state):
    """``state`` as the stacks before decision 73 held it: every PackedData as the scene's Data."""
    unpack = jax.jit(jax.vmap(jax.vmap(env.physics_model.unpack)))  # seeds, envs
    return state.replace(env=jax.tree.map(lambda x: unpack(x) if isinstance(x, PackedData) else x, state.env,
                                          is_leaf=lambda x: isinstance(x, PackedData)))


@pytest.fixture(scope="module")
def point_goal():
    env = crax.make("PointGoal1")
    trainer = Trainer(PPOLag, tiny(PPOLag.Config, num_seeds=2), env)
    state = _filled(trainer.abstract_state(), jax.random.key(0))
    return env, trainer, state


def test_an_old_checkpoint_loads_bit_for_bit(tmp_path, point_goal):
    env, trainer, state = point_goal
    old = _old_layout(env, state)
    assert "autoreset_pool" in old.env.info and not isinstance(old.env.info["autoreset_pool"]["data"], PackedData)
    ckpt.save_checkpoint(tmp_path, old, env_steps=128, iteration=2)

    with pytest.raises(ckpt.CheckpointMismatch, match="env/data/physics"):
        ckpt.load_checkpoint(tmp_path, trainer.abstract_state())
    upgrade = checkpoint_layouts.packed_data([crax.make("PointGoal2"), env])  # a curriculum's stages
    restored = ckpt.load_checkpoint(tmp_path, trainer.abstract_state(), upgrade)
    trees.assert_equal(restored["state"], state)
    assert restored["env_steps"] == 128 and restored["iteration"] == 2

    ckpt.save_checkpoint(tmp_path, state, env_steps=192, iteration=3)  # today's layout passes unchanged
    trees.assert_equal(ckpt.load_checkpoint(tmp_path, trainer.abstract_state(), upgrade)["state"], state)


def test_a_checkpoint_of_the_whole_physics_data_loads_the_fields_the_stack_carries(tmp_path, point_goal):
    """Decision 73's stacks stored every field of the physics model's Data; decision 74's carry MuJoCo's
    state and the step's reads, which such a checkpoint holds: it loads, the rest left behind."""
    env, trainer, state = point_goal
    whole = jax.jit(jax.vmap(jax.vmap(env.physics_model.physics_data)))  # seeds, envs

    def widen(x):
        return x.replace(physics=whole(x)) if isinstance(x, PackedData) else x

    old = state.replace(env=jax.tree.map(widen, state.env, is_leaf=lambda x: isinstance(x, PackedData)))
    assert len(jax.tree.leaves(old)) > len(jax.tree.leaves(state)) + 100
    ckpt.save_checkpoint(tmp_path, old, env_steps=256, iteration=4)
    restored = ckpt.load_checkpoint(tmp_path, trainer.abstract_state(), checkpoint_layouts.packed_data([env]))
    trees.assert_equal(restored["state"], state)


def test_a_scene_of_another_env_is_left_to_the_mismatch_error(tmp_path, point_goal):
    env, trainer, state = point_goal
    ckpt.save_checkpoint(tmp_path, _old_layout(env, state), env_steps=64, iteration=1)
    with pytest.raises(ckpt.CheckpointMismatch, match="does not match"):
        ckpt.load_checkpoint(tmp_path, trainer.abstract_state(), checkpoint_layouts.packed_data([crax.make("PointGoal2")]))


def test_no_upgrade_without_a_physics_model():
    assert checkpoint_layouts.packed_data([ToyEnv()]) is None
