"""ReacherReach: the arm's model, observation, action scaling and time limit, reward and zone cost
on hand-placed states, the hazard lidar, and the layout over many resets.

One env program is compiled for the file (``compiled("ReacherReach1")``: reset and step) plus one
hand-placement (MuJoCo's forward pass, :mod:`tests.env.c_forward`, then crax's observation, costs
and reward terms in two small programs); layouts are checked with a
vmapped ``init_task`` (no physics) and sizes with ``jax.eval_shape``.
"""

from __future__ import annotations

import functools
import math
import types

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.core.context import Context
from crax.costs.arm_touch import ArmTouch, sample_chain
from crax.objects.mixed_zones import MixedZones
from crax.suites.reach import Reach
from crax.suites.task_env import NONFINITE_METRICS
from tests.env import c_forward
from tests.env.conftest import compiled

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

L0, L1 = 0.1, 0.11  # link lengths: base joint -> elbow -> fingertip
FAR = 5.0  # parked zones: beyond the lidar's 0.3 m and the arm's 0.21 m


def env1():
    return compiled("ReacherReach1")


def parked(n: int) -> np.ndarray:
    return np.stack([FAR + np.arange(n), np.full(n, FAR)], axis=-1).astype(np.float32)


@functools.cache
def _arrange_program():
    c = env1()
    env, suite, body = c.env, c.env.suite, c.env.body

    @jax.jit
    def write(qpos, qvel, target, hazards):
        data = env._data0.replace(
            qpos=env._data0.qpos.at[slice(*body.qpos_adr)].set(qpos),
            qvel=env._data0.qvel.at[slice(*body.qvel_adr)].set(qvel),
        )
        return suite.place(data, target, hazards)

    @jax.jit
    def observe(data, task):
        ctx = suite.context(env.mjx_model, data, task)
        _, tr = suite.transition(env.mjx_model, data, data, task, jnp.zeros(2))
        terms = {**tr.rewards, "reward": tr.reward, **tr.extra_metrics}
        return data, task, suite.observe(ctx), suite.costs(ctx), terms

    def arrange(qpos, qvel, target, hazards):
        data, task = write(qpos, qvel, target, hazards)
        return observe(c_forward.forward(env, data), task)

    return arrange


def arrange(theta=(0.0, 0.0), *, qvel=(0.0, 0.0), target=(FAR, -FAR), zones=None):
    """A hand-placed arm (joint angles ``theta``), target and zones (rows by zone index; the rest parked)."""
    hazards = parked(env1().env.suite.zones.count)
    for i, xy in (zones or {}).items():
        hazards[i] = xy
    out = _arrange_program()(
        jnp.asarray(theta, jnp.float32), jnp.asarray(qvel, jnp.float32), jnp.asarray(target, jnp.float32),
        jnp.asarray(hazards),
    )
    return jax.tree.map(np.asarray, out)


def as_state(data, task):
    """An env state (for ``step``) holding a hand-placed physics state and task."""
    c = env1()
    state = c.reset(jax.random.key(0))
    return state.replace(data=data, info={**state.info, "task": task})


def straight_arm_points() -> np.ndarray:
    """The 11 sample points of the arm at θ = (0, 0): 5 per link from the link's start, plus the tip."""
    xs = [L0 * k / 5 for k in range(5)] + [L0 + L1 * k / 5 for k in range(5)] + [L0 + L1]
    return np.stack([xs, np.zeros(11)], axis=-1)


# ---------------------------------------------------------------------------------------------
# The model (no compile)


def test_model_matches_gymnasium_reacher():
    env = env1().env
    m, body = env.mj_model, env.body
    assert (body.timestep, body.frame_skip) == (0.01, 2) and env.dt == pytest.approx(0.02)
    assert m.opt.timestep == pytest.approx(0.01)
    j0, j1 = m.joint("agent/joint0"), m.joint("agent/joint1")
    assert not m.jnt_limited[j0.id] and m.jnt_limited[j1.id]
    np.testing.assert_allclose(m.jnt_range[j1.id], [-3.0, 3.0])
    np.testing.assert_allclose(m.actuator_gear[:, 0], [200.0, 200.0])
    np.testing.assert_allclose(m.actuator_ctrlrange, [[-1.0, 1.0], [-1.0, 1.0]])
    np.testing.assert_allclose(m.body("agent/link1").pos, [L0, 0, 0])
    np.testing.assert_allclose(m.body("agent/fingertip").pos, [L1, 0, 0])
    assert m.body("agent/torso").jntnum == 0  # fixed base
    assert m.body_mocapid[m.body("agent/target").id] >= 0
    agent = [g for g in range(m.ngeom) if m.body(int(m.geom_bodyid[g])).name.startswith("agent/")]
    assert len(agent) >= 4
    assert not np.any(m.geom_contype[agent]) and not np.any(m.geom_conaffinity[agent])  # visual only
    assert env._data0._impl.contact.dist.shape == (0,)  # no collision pair at all
    # the arm is above the floor and the zones
    assert m.body("agent/torso").pos[2] > 0.01


@pytest.mark.slow
def test_sizes_by_eval_shape():
    for level, n in ((1, 4), (2, 7), (3, 10)):
        env = crax.make(f"ReacherReach{level}")
        state = env.state_shapes
        assert state.obs.shape == (27,) and env.action_size == 2
        assert state.info["task"]["hazards"].shape == (n, 2)
        assert state.info["task"]["target"].shape == (1, 2)
        assert set(state.metrics) == {"reward/shaping", "reward/reached", "cost/zones", "distance", *NONFINITE_METRICS}
    env = crax.make("ReacherReach2", num_hazards=0, lidar_max_dist=0.5)
    assert env.state_shapes.info["task"]["hazards"].shape == (0, 2)


def test_bad_ids_and_parameters():
    with pytest.raises(ValueError) as err:
        crax.make("ReacherGoal1")
    for name in ("Point", "Ant", "Humanoid", "Spider"):
        assert name in str(err.value)
    with pytest.raises(ValueError, match="Reacher"):
        crax.make("PointReach1")
    with pytest.raises(ValueError, match="num_hazards"):
        crax.make("ReacherReach1", num_hazards=-1)
    with pytest.raises(ValueError, match="samples_per_link"):
        crax.make("ReacherReach1", samples_per_link=0)
    with pytest.raises(ValueError, match="1, 2, 3"):
        Reach(crax.make("ReacherReach1").body, 4)


# ---------------------------------------------------------------------------------------------
# Stepping (the file's one compiled env)


@pytest.mark.slow
def test_observation_layout_after_steps_and_reset_noise():
    c = env1()
    state = c.reset(jax.random.key(3))
    q0 = np.asarray(state.data.qpos[:2])
    assert np.all(np.abs(q0) <= 0.1) and np.all(np.abs(np.asarray(state.data.qvel[:2])) <= 0.005)
    target = np.asarray(state.info["task"]["target"][0])
    tip_id, target_id = c.env.body.chain_ids[-1], c.env.body.target_id
    rng = np.random.default_rng(0)
    for _ in range(4):
        state = c.step(state, jnp.asarray(rng.uniform(-1, 1, 2), jnp.float32))
        obs, d = np.asarray(state.obs), state.data
        q, v = np.asarray(d.qpos[:2]), np.asarray(d.qvel[:2])
        np.testing.assert_allclose(obs[0:2], np.cos(q), atol=1e-6)
        np.testing.assert_allclose(obs[2:4], np.sin(q), atol=1e-6)
        np.testing.assert_allclose(obs[4:6], target, atol=1e-7)
        np.testing.assert_allclose(obs[6:8], v, rtol=1e-6)
        np.testing.assert_allclose(obs[8:11], np.asarray(d.xpos[tip_id] - d.xpos[target_id]), atol=1e-7)
        assert obs[10] == pytest.approx(0.0, abs=1e-7)  # fingertip and target at one height
        np.testing.assert_allclose(np.asarray(d.mocap_pos[c.env.body.target_mocap][:2]), target)
    assert obs.shape == (27,) and np.all(np.isfinite(obs))


def test_action_scaling_and_physics_match_mujoco():
    c = env1()
    state = c.reset(jax.random.key(5))
    action = np.asarray([0.5, -3.0], np.float32)  # clipped to the control range ±1
    nxt = c.step(state, jnp.asarray(action))
    np.testing.assert_allclose(np.asarray(nxt.data.ctrl), [0.5, -1.0])
    np.testing.assert_allclose(np.asarray(nxt.data.qfrc_actuator[:2]), [100.0, -200.0], rtol=1e-6)  # gear 200
    m = c.env.mj_model
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = np.asarray(state.data.qpos), np.asarray(state.data.qvel)
    d.mocap_pos[:] = np.asarray(state.data.mocap_pos)
    d.ctrl[:] = [0.5, -1.0]
    for _ in range(2):  # frame skip 2
        mujoco.mj_step(m, d)
    np.testing.assert_allclose(np.asarray(nxt.data.qpos), d.qpos, atol=1e-5)
    np.testing.assert_allclose(np.asarray(nxt.data.qvel), d.qvel, rtol=1e-4, atol=1e-4)


def test_never_terminates_only_truncates_and_target_stays():
    c = env1()
    # elbow driven into its limit at speed, fingertip on the target: no termination, no respawn
    data, task, *_ = arrange((0.3, 2.99), qvel=(50.0, 80.0), target=(0.0, 0.0))
    state = as_state(data, task)
    for _ in range(3):
        state = c.step(state, jnp.asarray([1.0, 1.0]))
        assert float(state.done) == 0.0 and float(state.truncation) == 0.0
    np.testing.assert_allclose(np.asarray(state.info["task"]["target"]), [[0.0, 0.0]])
    # fingertip resting on the target: reached, and the target does not move
    data, task, *_ = arrange((0.0, 0.0), target=(L0 + L1, 0.0))
    state = c.step(as_state(data, task), jnp.zeros(2))
    assert float(state.metrics["reward/reached"]) == 1.0
    np.testing.assert_allclose(np.asarray(state.info["task"]["target"]), [[L0 + L1, 0.0]], atol=1e-7)
    # time limit: done (truncation) exactly at step 1000
    state = state.replace(info={**state.info, "steps": jnp.asarray(998, jnp.int32)})
    state = c.step(state, jnp.zeros(2))
    assert float(state.done) == 0.0
    state = c.step(state, jnp.zeros(2))
    assert float(state.done) == 1.0 and float(state.truncation) == 1.0


# ---------------------------------------------------------------------------------------------
# Reward, cost and lidar on hand-placed states


@pytest.mark.parametrize("d", [0.01, 0.2, 0.5])
def test_reward_at_hand_placed_distances(d):
    tip = np.array([L0 + L1, 0.0])  # straight arm
    target = tip + d * np.array([-0.6, 0.8])
    _, _, _, _, terms = arrange((0.0, 0.0), target=target)
    shaping = 0.1 * max(0.0, 1.0 - d / 0.4) ** 2
    reached = 1.0 if d < 0.02 else 0.0
    assert float(terms["distance"]) == pytest.approx(d, abs=1e-6)
    assert float(terms["shaping"]) == pytest.approx(shaping, abs=1e-6)
    assert float(terms["reached"]) == reached
    assert float(terms["reward"]) == pytest.approx(shaping + reached, abs=1e-6)
    assert {"0.01": 1.0950625, "0.2": 0.025, "0.5": 0.0}[str(d)] == pytest.approx(shaping + reached)


# Straight arm along +x: sample points at x = 0, .02, .04, .06, .08 | .1, .122, .144, .166, .188 | tip .21.
# Zones 0 and 2 are circles (r 0.035), zones 1 and 3 squares (half 0.03).
STRAIGHT_CASES = {
    "circle across link1": ({0: (0.13, 0.02)}, 1.0),  # holds x = .122 (d .0215) and .144 (d .0244)
    "square across link0": ({1: (0.051, -0.025)}, 1.0),  # holds x = .04, .06, .08 (|dx| ≤ .029, |dy| .025)
    "beside the arm": ({0: (0.1, 0.05), 1: (0.15, -0.045)}, 0.0),  # 5 cm and 4.5 cm off the line
    "one zone, two links": ({0: (0.1, 0.0)}, 1.0),  # holds .08, .1 (elbow) and .122: counted once
    "tip only": ({2: (0.24, 0.0)}, 1.0),  # tip .21 at d .03; .188 at d .052
    "three zones": ({0: (0.13, 0.02), 1: (0.051, -0.025), 2: (0.24, 0.0), 3: (0.15, -0.045)}, 3.0),
}


@pytest.mark.parametrize("case", list(STRAIGHT_CASES))
def test_zone_cost_straight_arm(case):
    zones, want = STRAIGHT_CASES[case]
    _, _, _, costs, _ = arrange((0.0, 0.0), zones=zones)
    assert float(costs["zones"]) == want
    # the same count from hand geometry on the 11 hand-computed points
    pts = straight_arm_points()
    count = 0
    for i, (x, y) in zones.items():
        rel = pts - np.array([x, y])
        inside = np.hypot(*rel.T) <= 0.035 if i % 2 == 0 else np.all(np.abs(rel) <= 0.03, axis=1)
        count += bool(np.any(inside))
    assert count == want


def test_zone_cost_bent_arm():
    # θ = (π/2, −π/2): link0 up the y axis to (0, .1), link1 along +x to the tip (.11, .1)
    square = {1: (0.055, 0.125)}  # holds (.044, .1) and (.066, .1); misses (.022, .1) and (.088, .1)
    circle = {0: (-0.03, 0.05)}  # holds (0, .04) and (0, .06) at d .0316
    miss = {2: (0.16, 0.1)}  # nearest sample: the tip (.11, .1) at d .05
    theta = (math.pi / 2, -math.pi / 2)
    data, *_ = arrange(theta)
    tip = data.xpos[env1().env.body.chain_ids[-1]]
    np.testing.assert_allclose(tip[:2], [L1, L0], atol=1e-6)
    for zones, want in ((square, 1.0), (circle, 1.0), (miss, 0.0), ({**square, **circle, **miss}, 2.0)):
        assert float(arrange(theta, zones=zones)[3]["zones"]) == want


def test_hazard_lidar_against_hand_geometry():
    # zone 0 at 100° and 0.15 m from the base, zone 1 at 350° and 0.25 m (wraps around bin 0)
    def polar(deg, r):
        return (r * math.cos(math.radians(deg)), r * math.sin(math.radians(deg)))

    _, _, obs, _, _ = arrange((0.0, 0.0), zones={0: polar(100, 0.15), 1: polar(350, 0.25)})
    lidar = obs[11:]
    want = np.zeros(16)
    # 100° / 22.5° = 4.444: bin 4 reads (0.3 − 0.15)/0.3 = 0.5; alias α = 0.444 to bin 5, 1 − α to bin 3
    want[4], want[5], want[3] = 0.5, 0.5 * (100 / 22.5 - 4), 0.5 * (5 - 100 / 22.5)
    # 350° / 22.5° = 15.556: bin 15 reads 0.05/0.3; α = 0.556 to bin 0, 1 − α to bin 14
    r = 0.05 / 0.3
    want[15], want[0], want[14] = r, r * (350 / 22.5 - 15), r * (16 - 350 / 22.5)
    np.testing.assert_allclose(lidar, want, atol=1e-5)


def test_arm_touch_samples_and_weight_without_physics():
    chain = jnp.asarray([[0.0, 0.0], [0.1, 0.0], [0.21, 0.0]])
    np.testing.assert_allclose(np.asarray(sample_chain(chain, 5)), straight_arm_points(), atol=1e-7)
    np.testing.assert_allclose(np.asarray(sample_chain(chain, 1)), [[0, 0], [0.1, 0], [0.21, 0]])
    zones = MixedZones(2, 0.035, 0.03)
    zones.label = "z"
    data = types.SimpleNamespace(xpos=jnp.asarray([[9.0, 9, 9], [0, 0, 0.02], [0.1, 0, 0.02], [0.21, 0, 0.02]]))
    ctx = Context(model=None, data=data, agent_xy=jnp.zeros(2), agent_yaw=jnp.zeros(()),
                  task={"z": jnp.asarray([[0.05, 0.02], [0.16, 0.0]])})  # both between the joints
    for spl, beta, want in ((5, 1.0, 2.0), (5, 2.5, 5.0), (1, 1.0, 0.0)):
        term = ArmTouch(zones, ("a", "b", "c"), samples_per_link=spl, cost_scale=beta)
        term.chain_ids = (1, 2, 3)
        assert float(term.cost(ctx)) == pytest.approx(want)


# ---------------------------------------------------------------------------------------------
# Layout over many resets (vmapped init_task: no physics)


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.slow
def test_layout_zones_clear_of_each_other_and_the_target(level):
    env = env1().env if level == 1 else crax.make(f"ReacherReach{level}")
    suite, body = env.suite, env.body

    @jax.jit
    @jax.vmap
    def start(key):
        data, task = suite.init_task(env.mjx_model, env._data0, key)
        return data.qpos, data.qvel, data.mocap_pos, task

    keys = jax.random.split(jax.random.key(level), 2048)
    qpos, qvel, mocap, task = jax.tree.map(np.asarray, start(keys))
    n = suite.zones.count
    target, zones = task["target"][:, 0], task["hazards"]
    assert zones.shape == (len(keys), n, 2)
    keep = np.asarray([0.035 if i % 2 == 0 else 0.03 * math.sqrt(2) for i in range(n)])
    # zone–zone: centres at least the sum of circumradii apart (so the shapes cannot overlap)
    d = np.linalg.norm(zones[:, :, None] - zones[:, None], axis=-1) + np.eye(n) * 1e9
    assert np.all(d >= keep[:, None] + keep[None, :] - 1e-6)
    # zone–target: the reach disc (0.02) and the tip (0.01) stay clear of every zone
    dt = np.linalg.norm(zones - target[:, None], axis=-1)
    assert np.all(dt >= keep[None] + 0.03 - 1e-6)
    # annuli: target 0.05–0.20, zone centres 0.07–0.21 from the base
    rt, rz = np.linalg.norm(target, axis=-1), np.linalg.norm(zones, axis=-1)
    assert np.all((rt >= 0.05 - 1e-6) & (rt <= 0.2 + 1e-6)) and np.all((rz >= 0.07 - 1e-6) & (rz <= 0.21 + 1e-6))
    # mocaps follow the task; layouts differ between resets; reset noise as Gymnasium's
    np.testing.assert_allclose(mocap[:, suite.zones.mocap_ids, :2], zones)
    np.testing.assert_allclose(mocap[:, body.target_mocap, :2], target)
    assert len(np.unique(target.round(6), axis=0)) == len(keys)
    assert np.all(np.abs(qpos[:, :2]) <= 0.1) and np.std(qpos[:, :2]) > 0.04
    assert np.all(np.abs(qvel[:, :2]) <= 0.005) and np.std(qvel[:, :2]) > 0.002
    m = env.mj_model
    types_ = [int(m.geom_type[m.geom(f"hazards/{i}").id]) for i in range(n)]
    assert types_ == [int(mujoco.mjtGeom.mjGEOM_CYLINDER if i % 2 == 0 else mujoco.mjtGeom.mjGEOM_BOX) for i in range(n)]
