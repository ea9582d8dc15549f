"""HumanoidHeight on hand-placed states: the hinge cost against hand values around h_max at every
level, no termination for being low (a lying humanoid rests on its floor-colliding geoms), the
no-progress termination from a hand-set ring buffer, the reward terms of one step, the floor
collision pairs, the ceiling, sizes and the ids ``crax.make`` accepts.

One env is compiled (``compiled("HumanoidHeight1")``: its ``reset`` and ``step``) plus one jitted
``mjx.kinematics`` for torso heights; other levels' costs are their constraint evaluated on the
same kinematics (the scene is the same at every level).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.bodies import Humanoid
from crax.core.mjx import mjx
from crax.costs.height_limit import HeightLimit
from crax.suites.height import FLOOR_GEOMS, Height
from crax.suites.task_env import NONFINITE_METRICS
from tests.env.conftest import compiled
from tests.env.legged_checks import candidate_pairs

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

H_MAX = Height.params["h_max"].levels  # the declared ceiling by level

ENV_ID = "HumanoidHeight1"
W, DELTA = 0.1, 0.08
WINDOW = 200
ON_BACK = (np.cos(np.pi / 4), 0.0, -np.sin(np.pi / 4), 0.0)  # turned −90° about y: head to −x, chest up
FACE_DOWN = (np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0)  # +90° about y: head to +x, chest down


def env():
    return compiled(ENV_ID).env


def host(tree):
    return jax.tree.map(lambda x: x if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else np.asarray(x), tree)


def hinge(h: float, h_max: float) -> float:
    return W * max(0.0, h - h_max) / DELTA


@functools.cache
def _kinematics():
    e = env()
    return jax.jit(lambda qpos: mjx.kinematics(e.mjx_model, e._data0.replace(qpos=qpos)))


def at_height(h: float, quat=(1.0, 0.0, 0.0, 0.0)):
    """Kinematics of the model pose with the torso at height ``h``, and the suite's context."""
    e = env()
    q = np.array(e.mj_model.qpos0, np.float32)
    q[2], q[3:7] = h, quat
    data = _kinematics()(jnp.asarray(q))
    return data, e.suite.context(e.mjx_model, data, {})


def with_task(state, **task):
    """``state`` with task entries replaced (numpy values cast to the entries' dtypes)."""
    old = state.info["task"]
    new = {**old, **{k: jnp.asarray(v, old[k].dtype).reshape(old[k].shape) for k, v in task.items()}}
    return state.replace(info={**state.info, "task": new})


def com_x(state) -> float:
    return float(env().body.locomotion_position(state.data)[0])


@pytest.mark.slow
def test_sizes_metrics_and_task_state():
    e = env()
    assert e.id == ENV_ID and e.episode_length == 1000 and e.dt == pytest.approx(0.015)
    state = e.state_shapes
    assert state.obs.shape == (376,) and e.action_size == 17
    assert set(state.metrics) == {
        "reward/forward",
        "reward/healthy",
        "reward/ctrl",
        "cost/height",
        "height",
        "progress",
        *NONFINITE_METRICS,
    }
    task = state.info["task"]
    assert task["x_history"].shape == (WINDOW,) and task["elapsed"].shape == () and task["elapsed"].dtype == jnp.int32
    after = jax.eval_shape(e.step, state, jnp.zeros(17))
    assert jax.tree.structure(after) == jax.tree.structure(state)


@pytest.mark.parametrize("h", [0.5, 1.0, 1.05, 1.15, 1.2, 1.30, 1.32, 1.38, 1.46, 1.7])
def test_hinge_cost_by_level(h):
    data, ctx = at_height(h)
    assert float(data.xpos[env().body.torso_id, 2]) == pytest.approx(h, abs=1e-6)
    np.testing.assert_allclose(env().suite.costs(ctx)["height"], hinge(h, 1.30), rtol=1e-5, atol=1e-6)
    for level, h_max in H_MAX.items():
        limit = HeightLimit("agent/torso", h_max)
        limit.bind(env().mj_model)
        np.testing.assert_allclose(limit.cost(ctx), hinge(h, h_max), rtol=1e-5, atol=1e-6, err_msg=f"level {level}")
    # one hinge margin above the ceiling costs w
    np.testing.assert_allclose(hinge(1.30 + DELTA, 1.30), W)


def test_levels_weights_and_overrides():
    for level, h_max in H_MAX.items():
        assert float(Height(Humanoid(), level).limit.h_max[...]) == pytest.approx(h_max)
    other = crax.make("HumanoidHeight2", h_max=0.9, cost_weight=0.5, hinge_margin=0.1)  # not jitted
    limit = other.suite.limit
    assert (float(limit.h_max[...]), float(limit.weight[...]), float(limit.margin[...])) == pytest.approx(
        (0.9, 0.5, 0.1)
    )
    _, ctx = at_height(1.2)  # the same scene as level 1's
    np.testing.assert_allclose(limit.cost(ctx), 0.5 * 0.3 / 0.1, rtol=1e-5)
    # reset puts the drawn ceiling at the h_max in use
    data, _ = other.suite.init_task(other.mjx_model, other._data0, jax.random.key(0))
    np.testing.assert_allclose(np.asarray(data.mocap_pos)[other.suite.ceiling_id], (50.0, 0.0, 0.9), atol=1e-6)


@pytest.mark.slow
def test_step_reward_terms_cost_and_first_window():
    c = compiled(ENV_ID)
    s0 = c.reset(jax.random.key(1))
    action = np.linspace(-1.6, 1.6, 17).astype(np.float32)  # the ends clip to ±1
    s1 = host(c.step(s0, jnp.asarray(action)))
    m = {k: float(v) for k, v in s1.metrics.items()}
    x0, x1 = com_x(s0), com_x(s1)
    assert m["reward/forward"] == pytest.approx((x1 - x0) / 0.015, rel=1e-4, abs=1e-4)
    assert m["reward/healthy"] == 1.0
    assert m["reward/ctrl"] == pytest.approx(-0.01 * np.sum(np.clip(action, -1, 1) ** 2), rel=1e-6)
    assert float(s1.reward) == pytest.approx(m["reward/forward"] + 1.0 + m["reward/ctrl"], rel=1e-5)
    h = float(s1.data.xpos[env().body.torso_id, 2])
    assert m["height"] == h and h > 1.3  # the start pose stands above level 1's ceiling
    assert m["cost/height"] == pytest.approx(hinge(h, 1.30), rel=1e-5) and float(s1.cost) == m["cost/height"]
    # the ring buffer: step 0's x at slot 0; progress over the (partial) window = since the reset
    assert int(s1.info["task"]["elapsed"]) == 1
    assert s1.info["task"]["x_history"][0] == pytest.approx(x0, abs=1e-7)
    assert m["progress"] == pytest.approx(x1 - x0, abs=1e-6)
    assert float(s1.done) == 0.0


@pytest.mark.parametrize(
    ("elapsed", "advance", "done"),
    [
        (WINDOW - 1, 0.3, True),  # the step that fills the window: 0.3 m < 0.5 m
        (WINDOW - 1, 0.7, False),
        (WINDOW - 2, 0.0, False),  # window not yet full: no termination however little progress
        (0, -1.0, False),  # the first step: slot 0 is this step's start, whatever was there
        (450, 0.2, True),  # wrapped around: the slot of step 251 = 451 − 200
        (450, -0.3, True),  # walking backwards is no progress
        (450, 0.8, False),
    ],
)
def test_no_progress_termination(elapsed, advance, done):
    c = compiled(ENV_ID)
    s0 = c.reset(jax.random.key(2))
    x0 = com_x(s0)
    read = (elapsed + 1) % WINDOW if elapsed + 1 >= WINDOW else 0
    history = np.full(WINDOW, 100.0, np.float32)  # every other slot far ahead: reading one would end it
    history[read] = x0 - advance
    s1 = host(c.step(with_task(s0, x_history=history, elapsed=elapsed), jnp.zeros(17)))
    reference = x0 if elapsed == 0 else x0 - advance
    progress = com_x(s1) - reference
    assert float(s1.metrics["progress"]) == pytest.approx(progress, abs=1e-5)
    assert abs(progress - (x0 - reference)) < 0.05  # one step moves the centre of mass little
    assert float(s1.done) == float(done) and float(s1.truncation) == 0.0
    task = s1.info["task"]
    assert int(task["elapsed"]) == elapsed + 1
    assert task["x_history"][elapsed % WINDOW] == pytest.approx(x0, abs=1e-7)  # this step's start written


@pytest.mark.parametrize(
    ("quat", "heights", "resting_on"),
    [
        (ON_BACK, (0.06, 0.08), {"torso", "butt", "right_foot", "left_foot"}),  # torso capsule radius 0.07
        (
            FACE_DOWN,
            (0.1, 0.16),
            {"butt", "right_shin", "left_shin", "right_foot", "left_foot", "right_hand", "left_hand"},
        ),
    ],
)
def test_lying_low_does_not_terminate_and_rests_on_the_floor(quat, heights, resting_on):
    c = compiled(ENV_ID)
    s0 = c.reset(jax.random.key(3))
    q = np.array(s0.data.qpos)
    q[2], q[3:7] = 0.3, quat
    state = with_task(
        s0.replace(data=s0.data.replace(qpos=jnp.asarray(q))), x_history=np.full(WINDOW, -10.0), elapsed=WINDOW + 5
    )
    h = []
    for _ in range(40):
        state = c.step(state, jnp.zeros(17))
        h.append(float(state.metrics["height"]))
        assert float(state.done) == 0.0  # far below the Humanoid's healthy 1.0 m; progress 10 m
        assert float(state.cost) == 0.0
    # it lands and lies still on Height's floor geoms; with the feet alone colliding it would have
    # pivoted about them and sunk through the floor
    assert heights[0] < min(h[20:]) and max(h[20:]) < heights[1]
    assert max(h[20:]) - min(h[20:]) < 0.01
    m = env().mj_model
    touching = {
        m.geom(int(g)).name.removeprefix("agent/")
        for pair, d in zip(
            np.asarray(state.data._impl.contact.geom), np.asarray(state.data._impl.contact.dist), strict=True
        )
        if d < 0
        for g in pair
    }
    assert touching == {"floor", *resting_on}


def test_floor_collision_pairs_and_visual_ceiling():
    m = env().mj_model
    colliding = {"right_foot", "left_foot", *FLOOR_GEOMS}
    assert sorted(candidate_pairs(m)) == sorted(("agent/" + g, "floor") for g in colliding)  # no self-collision
    assert env()._data0._impl.contact.geom.shape == (12, 2)  # capsules take 2 slots, spheres 1
    ceiling = m.geom("ceiling")
    assert ceiling.contype == 0 and ceiling.conaffinity == 0
    state = host(compiled(ENV_ID).reset(jax.random.key(0)))
    np.testing.assert_allclose(state.data.mocap_pos[env().suite.ceiling_id], (50.0, 0.0, 1.30), atol=1e-6)
    # the Humanoid's own observation rows never include the ceiling's body
    assert m.body("ceiling").id not in env().body.obs_bodies
    # feet only, no ceiling: the Humanoid's two foot slots and no mocap body
    bare = crax.make("HumanoidHeight1", floor_geoms=(), ceiling=False)
    assert bare._data0._impl.contact.geom.shape == (2, 2) and bare.mj_model.nmocap == 0


def test_ids_and_bad_input():
    e = crax.make("HumanoidHeight3")
    assert e.id == "HumanoidHeight3" and float(e.suite.limit.h_max[...]) == pytest.approx(1.0)
    assert {"HumanoidHeight1", "HumanoidHeight2", "HumanoidHeight3"} <= set(crax.env_ids())
    assert crax.parse_id("HumanoidHeight2")[0] is Humanoid
    with pytest.raises(ValueError, match="HumanoidHeight ids name no body"):
        crax.make("AntHumanoidHeight1")
    with pytest.raises(ValueError, match="names no known suite"):
        crax.make("AntHeight1")
    with pytest.raises(ValueError, match="valid levels: 1, 2, 3"):
        Height(Humanoid(), 4)
    with pytest.raises(ValueError, match="progress_window"):
        Height(Humanoid(), 1, progress_window=0)
    with pytest.raises(ValueError, match="no geom 'knee'.*right_shin"):
        crax.make("HumanoidHeight1", floor_geoms=("knee",))
    with pytest.raises(ValueError, match="hinge_margin must be > 0, got 0.0"):
        crax.make("HumanoidHeight1", hinge_margin=0.0)
