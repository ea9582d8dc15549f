"""Non-finite actions are zeroed and counted; a non-finite physics state ends the episode as a
termination with finite outputs. Uses the shared compiled PointGoal1 (episode length 7)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.suites.task_env import NONFINITE_METRICS
from tests.env.conftest import host

ZONES = [(-1.0, 1.0)]
GOAL = [(1.5, 0.5)]


def arranged(c, **kwargs):
    return c.arrange((-1.0, 0.2), 0.3, qvel=(0.4, -0.2, 0.5), goal=GOAL, cylinder_zones=ZONES, **kwargs)


def test_metric_names():
    assert NONFINITE_METRICS == ("env/nonfinite_action", "env/nonfinite_state")


@pytest.mark.parametrize(
    ("bad", "zeroed"),
    [
        ([np.nan, 0.7], [0.0, 0.7]),
        ([0.5, np.inf], [0.5, 0.0]),
        ([-np.inf, np.nan], [0.0, 0.0]),
    ],
)
@pytest.mark.slow
def test_nonfinite_action_entries_act_as_zero_and_are_counted(point_goal1, bad, zeroed):
    state = arranged(point_goal1)
    got = host(point_goal1.step(state, jnp.asarray(bad, jnp.float32)))
    want = host(point_goal1.step(state, jnp.asarray(zeroed, jnp.float32)))
    assert np.all(np.isfinite(got.data.qpos)) and np.all(np.isfinite(got.data.qvel))
    np.testing.assert_array_equal(got.data.qpos, want.data.qpos)
    np.testing.assert_array_equal(got.data.qvel, want.data.qvel)
    np.testing.assert_array_equal(got.obs, want.obs)
    assert got.reward == want.reward and got.cost == want.cost and got.done == want.done == 0.0
    assert got.metrics["env/nonfinite_action"] == 1.0 and want.metrics["env/nonfinite_action"] == 0.0
    assert got.metrics["env/nonfinite_state"] == want.metrics["env/nonfinite_state"] == 0.0


@pytest.mark.parametrize(("field", "steps"), [("qpos", 0), ("qvel", 0), ("qpos", 6)])
def test_nonfinite_state_terminates_with_finite_outputs(point_goal1, field, steps):
    # steps=6: the step would also hit the time limit (7); it still counts as a termination.
    state = arranged(point_goal1, steps=steps)
    data = state.data
    state = state.replace(data=data.replace(**{field: getattr(data, field).at[0].set(jnp.nan)}))
    nxt = host(point_goal1.step(state, jnp.asarray([0.5, 0.0])))
    assert nxt.done == 1.0 and nxt.truncation == 0.0
    assert nxt.metrics["env/nonfinite_state"] == 1.0 and nxt.metrics["env/nonfinite_action"] == 0.0
    assert not np.all(np.isfinite(nxt.data.qpos))  # the physics state is left for the auto-reset
    np.testing.assert_array_equal(nxt.obs, np.zeros_like(nxt.obs))
    assert nxt.reward == 0.0 and nxt.cost == 0.0
    for name, value in nxt.metrics.items():
        assert np.all(np.isfinite(value)), name


def test_healthy_step_reports_zero_flags(point_goal1):
    nxt = host(point_goal1.step(arranged(point_goal1), jnp.asarray([0.5, -0.5])))
    assert nxt.metrics["env/nonfinite_action"] == 0.0 and nxt.metrics["env/nonfinite_state"] == 0.0
    assert nxt.done == 0.0 and np.all(np.isfinite(nxt.obs))


@pytest.mark.parametrize("env_id", ["PointGoal1", "HalfCheetahVelocity1"])
@pytest.mark.slow
def test_reset_and_step_have_the_same_metrics(env_id):
    env = crax.make(env_id)
    reset = env.state_shapes
    step = jax.eval_shape(env.step, reset, jnp.zeros(env.action_size))
    assert jax.tree.structure(reset) == jax.tree.structure(step)
    assert {k: (v.shape, v.dtype) for k, v in reset.metrics.items()} == {
        k: (v.shape, v.dtype) for k, v in step.metrics.items()
    }
    assert set(NONFINITE_METRICS) <= set(reset.metrics)
