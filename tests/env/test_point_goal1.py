"""PointGoal1 (``episode_length=7, goal_radius=0.5``): Goal reward and goal respawn on hand-placed
states, costs through ``env.step`` and the time limit; a suite's substep hook.

Compiled programs: ``arrange`` and ``step`` of the shared env (``tests/env/conftest.py``), and (slow)
the step of a PointGoal1 whose hook counts substeps.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.point import Point
from crax.suites.goal import Goal
from crax.suites.task_env import TaskEnv
from tests.env.conftest import POINT_GOAL1

GOAL_COMPASS = slice(44, 46)
ZONES = [(x, y) for y in (-1.6, 1.6) for x in (-2.0, -1.2, -0.4, 0.4, 1.2, 2.0)]
"""Twelve zones (r 0.4) in two rows, leaving a free band around the agent at the origin."""


def dist(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - np.asarray(b, np.float64)))


# ---------------------------------------------------------------------------------------------
# Reward on hand-placed states: r = alpha_dist (d_{t-1} - d_t) + alpha_goal n_reached.


@pytest.mark.parametrize(
    ("before", "after", "goal", "reached"),
    [
        ((0.0, 0.0), (0.5, 0.0), (1.5, 0.0), False),  # 0.5 closer
        ((0.0, 0.0), (-0.3, 0.4), (1.5, 0.0), False),  # moved away
        ((0.0, 0.0), (1.1, 0.0), (1.5, 0.0), True),  # d = 0.4 <= goal_radius 0.5 (override)
        ((1.0, -1.0), (1.0, -0.5), (1.0, 0.0), True),  # d = 0.5: on the rim counts
        ((0.0, 0.0), (0.9, 0.0), (1.5, 0.0), False),  # d = 0.6
    ],
)
def test_goal_reward_on_hand_placed_states(point_goal1, before, after, goal, reached):
    env = point_goal1.env
    s0 = point_goal1.arrange(before, 0.0, goal=[goal], cylinder_zones=ZONES)
    s1 = point_goal1.arrange(after, 0.0, goal=[goal], cylinder_zones=ZONES)
    _, tr = env.suite.transition(env.mjx_model, s0.data, s1.data, s1.info["task"], jnp.zeros(2))
    want = dist(before, goal) - dist(after, goal) + (1.0 if reached else 0.0)
    assert float(tr.reward) == pytest.approx(want, abs=1e-5)
    assert float(tr.rewards["distance"]) == pytest.approx(dist(before, goal) - dist(after, goal), abs=1e-5)
    assert float(tr.rewards["goal"]) == (1.0 if reached else 0.0)
    moved = not np.allclose(np.asarray(tr.task["goal"]), [goal])
    assert moved == reached


def test_reward_weights_are_overridable(point_goal1):
    env = crax.make("PointGoal1", alpha_dist=2.0, reward_goal=5.0, goal_radius=0.5)
    s0 = point_goal1.arrange((0.0, 0.0), 0.0, goal=[(1.5, 0.0)])
    s1 = point_goal1.arrange((1.2, 0.0), 0.0, goal=[(1.5, 0.0)])
    _, tr = env.suite.transition(env.mjx_model, s0.data, s1.data, s1.info["task"], jnp.zeros(2))
    assert float(tr.reward) == pytest.approx(2.0 * 1.2 + 5.0, abs=1e-5)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow
def test_goal_respawns_away_from_hazards_when_reached(point_goal1, seed):
    env = point_goal1.env
    suite = env.suite
    state = point_goal1.arrange((0.0, 0.0), 0.4, goal=[(0.3, 0.0)], cylinder_zones=ZONES, seed=seed)
    nxt = point_goal1.step(state, jnp.zeros(2))
    # the agent does not move (no velocity, zero action): the whole reward is the goal bonus
    assert float(nxt.reward) == 1.0
    assert float(nxt.metrics["reward/goal"]) == 1.0 and float(nxt.metrics["goals_reached"]) == 1.0
    assert float(nxt.metrics["reward/distance"]) == 0.0
    assert float(nxt.cost) == 0.0

    goal = np.asarray(nxt.info["task"]["goal"][0])
    assert dist(goal, (0.3, 0.0)) > 0.5
    assert np.all(np.abs(goal) <= suite.extent)
    goal_keepout = suite.props["goal"].keepout
    assert dist(goal, (0.0, 0.0)) >= suite.agent_keepout + goal_keepout - 1e-6
    zone_keepout = suite.hazards["cylinder_zones"].keepout
    for z in ZONES:
        assert dist(goal, z) >= zone_keepout + goal_keepout - 1e-6
    # the goal's mocap body moved with it and the observation already points at the new goal
    mocap = np.asarray(nxt.data.mocap_pos[suite.props["goal"].mocap_ids[0]])
    np.testing.assert_allclose(mocap[:2], goal, atol=1e-6)
    c, s = np.cos(0.4), np.sin(0.4)
    ego = np.array([c * goal[0] + s * goal[1], -s * goal[0] + c * goal[1]])
    np.testing.assert_allclose(np.asarray(nxt.obs[GOAL_COMPASS]), ego / np.linalg.norm(ego), atol=1e-5)
    # hazards never move
    np.testing.assert_allclose(np.asarray(nxt.info["task"]["cylinder_zones"]), ZONES, atol=1e-6)


def test_respawn_positions_differ_between_keys(point_goal1):
    goals = []
    for seed in range(3):
        state = point_goal1.arrange((0.0, 0.0), 0.0, goal=[(0.3, 0.0)], cylinder_zones=ZONES, seed=seed)
        goals.append(np.asarray(point_goal1.step(state, jnp.zeros(2)).info["task"]["goal"][0]))
    assert len({tuple(g.round(4)) for g in goals}) == 3


def test_step_reward_matches_distance_progress(point_goal1):
    env = point_goal1.env
    state = point_goal1.arrange((-1.0, 0.2), 0.0, qvel=(0.8, -0.3, 0.0), goal=[(1.5, 0.5)], cylinder_zones=ZONES)
    nxt = point_goal1.step(state, jnp.asarray([0.5, 0.0]))
    goal = (1.5, 0.5)
    before = np.asarray(env.body.position(state.data)[:2])
    after = np.asarray(env.body.position(nxt.data)[:2])
    assert dist(before, after) > 0.01  # it moved
    assert float(nxt.reward) == pytest.approx(dist(before, goal) - dist(after, goal), abs=1e-5)
    assert float(nxt.metrics["reward/goal"]) == 0.0


# ---------------------------------------------------------------------------------------------
# Costs and the time limit through env.step.


def test_step_costs_wall_contact(point_goal1):
    state = point_goal1.arrange((2.96, 0.0), 0.0)
    assert float(state.metrics["cost/contact"]) == 3.0
    nxt = point_goal1.step(state, jnp.asarray([1.0, 0.0]))  # pushing into the wall
    assert float(nxt.metrics["cost/contact"]) == 3.0
    assert float(nxt.cost) == 3.0
    assert float(nxt.data.qpos[0]) < 3.0  # the wall blocks it


def test_step_costs_zone_proximity(point_goal1):
    state = point_goal1.arrange((0.0, 0.0), 0.0, cylinder_zones=[(0.1, 0.0)])
    nxt = point_goal1.step(state, jnp.zeros(2))
    assert float(nxt.metrics["cost/cylinder_zones"]) == pytest.approx(2.0 * (1 - 0.1 / 0.4), rel=1e-5)
    assert float(nxt.cost) == pytest.approx(1.5, rel=1e-5)
    assert float(nxt.metrics["cost/contact"]) == 0.0


@pytest.mark.parametrize(("steps", "done"), [(0, 0.0), (5, 0.0), (6, 1.0)])
def test_episode_length_override_truncates_at_step_7(point_goal1, steps, done):
    assert point_goal1.env.episode_length == POINT_GOAL1["episode_length"] == 7
    state = point_goal1.arrange((0.0, 0.0), 0.0, steps=steps)
    nxt = point_goal1.step(state, jnp.zeros(2))
    assert int(nxt.info["steps"]) == steps + 1
    assert float(nxt.done) == done
    assert float(nxt.truncation) == done


# ---------------------------------------------------------------------------------------------
# Walls are sensed (SPEC decision 54): the point of each wall nearest to the agent enters the hazard
# pseudo-lidar and the hazard compasses.

HAZARD_LIDAR, HAZARD_COMPASS = slice(28, 44), slice(46, 62)


def test_walls_in_hazard_lidar_and_compasses(point_goal1):
    xy, yaw = (2.2, -1.0), 0.3
    state = point_goal1.arrange(xy, yaw)  # every zone and the goal parked far away
    obs = np.asarray(state.obs)
    # Nearest wall points: east (3, -1) at 0.8, south (2.2, -3) at 2.0; north (4.0) and west (5.2)
    # are beyond the lidar's range D = 3. Ego angles: east -0.3 rad, south -pi/2 - 0.3 rad.
    width, lidar = 2 * np.pi / 16, np.zeros(16)
    for d, ego_angle in ((0.8, -0.3), (2.0, -np.pi / 2 - 0.3)):
        pos = (ego_angle % (2 * np.pi)) / width
        b, alpha, r = int(pos), pos - int(pos), (3.0 - d) / 3.0
        lidar[b] = max(lidar[b], r)
        lidar[(b + 1) % 16] = max(lidar[(b + 1) % 16], alpha * r)
        lidar[b - 1] = max(lidar[b - 1], (1 - alpha) * r)
    assert lidar[15] == pytest.approx(2.2 / 3) and lidar[11] == pytest.approx(1 / 3)
    np.testing.assert_allclose(obs[HAZARD_LIDAR], lidar, atol=1e-5)

    c, s = np.cos(yaw), np.sin(yaw)

    def ego_unit(p):
        rel = np.asarray(p) - np.asarray(xy)
        e = np.array([c * rel[0] + s * rel[1], -s * rel[0] + c * rel[1]])
        return e / np.linalg.norm(e)

    compasses = obs[HAZARD_COMPASS].reshape(8, 2)
    for i, p in enumerate([(3.0, -1.0), (2.2, -3.0), (2.2, 3.0), (-3.0, -1.0)]):  # by distance
        np.testing.assert_allclose(compasses[i], ego_unit(p), atol=1e-5)
    # the next ones point at the (parked) zones
    np.testing.assert_allclose(compasses[4], ego_unit(np.asarray(state.info["task"]["cylinder_zones"][0])), atol=1e-5)


def test_walls_follow_the_agent(point_goal1):
    # Near the middle of the north wall, then near its east end: the wall's reading straight ahead
    # (facing +y, bin 0/15 boundary) is the same, since the nearest point moves along with the agent.
    a = np.asarray(point_goal1.arrange((0.0, 2.0), np.pi / 2).obs[HAZARD_LIDAR])
    b = np.asarray(point_goal1.arrange((1.9, 2.0), np.pi / 2).obs[HAZARD_LIDAR])
    assert a[0] == pytest.approx(2.0 / 3, abs=1e-5)
    assert b[0] == pytest.approx(2.0 / 3, abs=1e-5)
    # the east wall (1.1 away, to the right: ego angle -pi/2, bin 12) is seen only in the second pose
    assert a[12] == 0.0 and b[12] == pytest.approx(1.9 / 3, abs=1e-5)


# ---------------------------------------------------------------------------------------------
# The turn servo (DECISIONS 40): the yaw rate settles at the velocity servo's steady state,
# ω = gear·u / (gear² kv + damping) = 0.3u / 0.095, capped where the actuator force reaches its
# limit 0.05 (ω = 0.3·0.05 / 0.005 = 3). Without armature the servo chattered at its force limit
# (ω flipping ±1.96 every substep) and the Point turned only for |u| ≥ 0.75.

GYRO_Z = 8  # body observation: accelerometer 0-2, velocimeter 3-5, gyro 6-8, magnetometer 9-11


@pytest.mark.parametrize("command", [0.0, 0.25, 0.5, -0.5, 0.75, 1.0])
def test_point_turns_at_the_servo_rate(point_goal1, command):
    servo = float(np.clip(0.3 * command / (0.3**2 + 0.005), -3.0, 3.0))
    state = point_goal1.arrange((0.0, 0.0), 0.0, qvel=(0.0, 0.0, 0.005))  # reset-sized noise on the hinge
    dt = point_goal1.env.dt
    yaws, gyros = [], []
    for _ in range(25):  # 2 s
        state = point_goal1.step(state, jnp.asarray([0.0, command]))
        yaws.append(float(state.data.qpos[2]))
        gyros.append(float(state.obs[GYRO_Z]))
    rate = (yaws[-1] - yaws[-7]) / (6 * dt)  # the last 0.48 s
    assert rate == pytest.approx(servo, abs=0.03 * abs(servo) + 1e-3)
    np.testing.assert_allclose(gyros[-6:], servo, atol=0.03 * abs(servo) + 1e-3)


def test_reset_info_holds_only_what_is_read(point_goal1):
    # An unused PRNG key in info (``info["rng"]``) was carried in every state and checkpoint.
    assert set(point_goal1.template.info) == {"task", "steps"}


class _CountingSubsteps(Goal):
    """Goal whose substep hook adds 1 to ``data.userdata[0]`` (a counter the hook alone touches)."""

    def build(self, spec: mujoco.MjSpec) -> None:
        super().build(spec)
        spec.nuserdata = 1

    def substep(self, model, data, task):
        return super().substep(model, data, task).replace(userdata=data.userdata.at[0].add(1.0))


@pytest.mark.slow  # one more compiled step
def test_the_substep_hook_runs_once_before_every_physics_substep(point_goal1):
    """``TaskEnv`` calls ``Suite.substep`` in its substep scan, ``frame_skip`` times a control step
    (Safety-Gymnasium's Button moves its gremlins with it: tests/env/test_safety_button.py).
    The state is the shared env's hand-placed one with the counter slot added: the model differs
    only in ``nuserdata``, so only the counting env's step is compiled."""
    env = TaskEnv(_CountingSubsteps(Point(), 1))
    state = point_goal1.arrange()
    state = state.replace(data=state.data.replace(userdata=jnp.zeros(1, jnp.float32)))
    assert jax.tree.structure(state) == jax.tree.structure(env.state_shapes)
    assert [(x.shape, x.dtype) for x in jax.tree.leaves(state)] == [
        (x.shape, x.dtype) for x in jax.tree.leaves(env.state_shapes)]
    step = jax.jit(env.step)
    for k in (1, 2):
        state = step(state, jnp.zeros(env.action_size))
        assert float(state.data.userdata[0]) == k * env.body.frame_skip


# ---------------------------------------------------------------------------------------------
# The physics model: the scene without its inert bodies (crax.core.physics_model).


def test_the_physics_steps_the_scene_without_the_goal_and_zones(point_goal1):
    env = point_goal1.env
    scene, physics = env.mj_model, env.physics_model.mj_model
    inert = sorted(scene.body(b).name for b in env.physics_model.inert)
    assert inert == sorted(["goal/0", *(f"cylinder_zones/{i}" for i in range(12))])
    assert (physics.nbody, physics.nq, physics.nv, physics.nu, physics.nmocap) == (2, scene.nq, scene.nv, scene.nu, 0)
    colliding = [g for g in range(scene.ngeom) if scene.geom_contype[g] or scene.geom_conaffinity[g]]
    assert set(colliding) <= set(env.physics_model.kept("geom").tolist())
    np.testing.assert_array_equal(env.physics_model.kept("body"), [0, 1])
    with pytest.raises(ValueError, match="kind must be one of body, geom, site, mocap, cam, light"):
        env.physics_model.kept("joint")


def test_a_step_matches_mujoco_stepping_the_whole_scene(point_goal1):
    """One env step from a hand-placed state whose zone 0 was moved and turned by writing its mocap pose
    (no kinematics written): MuJoCo's ``mj_step`` of the scene model, zones included, gives the same
    joint state, and the same positions and orientations for every body and geom, the inert ones too."""
    env = point_goal1.env
    state = point_goal1.arrange((-0.5, 0.2), 0.3, qvel=(0.4, -0.2, 0.5), goal=[(1.5, 0.5)], cylinder_zones=ZONES)
    zone = env.mj_model.body_mocapid[env.mj_model.body("cylinder_zones/0").id]
    quat = np.array([np.cos(0.2), 0.0, np.sin(0.2), 0.0], np.float32) * 2.0  # not a unit quaternion: normalized
    data = state.data.replace(mocap_pos=state.data.mocap_pos.at[zone].set(jnp.asarray([0.7, -1.1, 0.3])),
                              mocap_quat=state.data.mocap_quat.at[zone].set(jnp.asarray(quat)))
    action = jnp.asarray([0.6, -0.4])
    nxt = point_goal1.step(state.replace(data=data), action)

    m = env.mj_model
    d = mujoco.MjData(m)
    for name in ("qpos", "qvel", "mocap_pos", "mocap_quat", "qacc_warmstart"):
        getattr(d, name)[:] = np.asarray(getattr(data, name), np.float64)
    d.ctrl[:] = np.asarray(env.body.ctrl(action), np.float64)
    for _ in range(env.body.frame_skip):
        mujoco.mj_step(m, d)
    for name in ("qpos", "qvel", "xpos", "xquat", "xmat", "xipos", "ximat", "geom_xpos", "geom_xmat", "subtree_com"):
        got, want = np.asarray(getattr(nxt.data, name)), getattr(d, name).reshape(getattr(nxt.data, name).shape)
        np.testing.assert_allclose(got, want, atol=2e-5, err_msg=name)
    moved = env.mj_model.geom("cylinder_zones/0").id
    np.testing.assert_allclose(np.asarray(nxt.data.geom_xpos[moved]), [0.7, -1.1, 0.3], atol=1e-6)
