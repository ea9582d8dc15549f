"""Which inputs a function reads (crax.core.reads) and which Data fields an env's step reads of the
state it is given (TaskEnv.step_reads), against functions and suites whose reads are known."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import crax
from crax.core.reads import read_leaves

X = jnp.ones(3)


def test_a_leaf_is_read_when_an_output_depends_on_it():
    assert read_leaves(lambda a, b, c: a * 2 + c[0], X, X, X) == [True, False, True]
    # a pytree argument is read leaf by leaf
    assert read_leaves(lambda d: d["u"][1:], {"u": X, "v": X}) == [True, False]


def test_a_nested_jit_is_read_through_and_a_loop_counts_as_reading_all_its_inputs():
    def nested(a, b):
        return jax.jit(lambda x, y: x * 3)(a, b)

    assert read_leaves(nested, X, X) == [True, False]

    def half_used(a, b):  # of a nested jit's two results, only the one from b counts
        return jax.jit(lambda x, y: (x + 1, y * 2))(a, b)[1]

    assert read_leaves(half_used, X, X) == [False, True]

    def loop(a, b):
        return jax.lax.fori_loop(0, 2, lambda i, c: (c[0] + 1, c[1]), (a, b))[0]

    assert read_leaves(loop, X, X) == [True, True]  # conservative: the loop carries b


def test_shape_structs_stand_in_for_arrays():
    s = jax.ShapeDtypeStruct((3,), jnp.float32)
    assert read_leaves(lambda a, b: jnp.sum(b), s, s) == [False, True]


@pytest.mark.parametrize(("env_id", "reads"), [
    ("PointGoal1", {"xpos"}),  # the distance to the goal before the step
    ("PointCircle1", set()),  # the reward reads the velocity after the step
    ("ReacherReach1", set()),
    ("SafetyPointButton1-v0", {"xpos"}),  # its gremlins' substep reads the clock (MuJoCo's state)
])
def test_an_envs_step_reads_are_found_without_the_physics(env_id, reads):
    assert crax.make(env_id).step_reads == reads
