"""Safety-Gymnasium's Circle 0-2 on the Point, the Car and the Ant, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself; docs/safety_gymnasium.md lists the tolerances (here and in
:mod:`tests.env.safety_gym_agents`) and what was measured. One env per id (module-scoped): every
level is placed in its recorded states; each agent's step is compiled at level 2 (both walls; the
reward and the dynamics as at level 0), the Point's at level 0 too; level 1 differs from level 2
only in its y sigwalls' absence, whose cost the recorded states check. The scene is the agent alone
(the circle and the sigwalls collide with nothing). Only the Car's level-0 definitions are in the
default tier.
"""

from __future__ import annotations

import gymnasium
import jax
import numpy as np
import pytest

import crax
from crax.gymnasium import register_envs
from crax.gymnasium import safety as safety_gymnasium
from crax.gymnasium.safety.wrappers import _safety_gym_info
from crax.suites.safety_gym import SafetyCircle
from crax.suites.task_env import TaskEnv
from tests.env import safety_gym_fidelity as fidelity
from tests.env.safety_gym_agents import ANT, CAR, POINT, agent_of, every_level, ids, navigators
from tests.env.safety_gym_reference import Replica, assert_spaces_and_keys, assert_step_costs, case
from tests.env.safety_gym_tracks import Track

REWARD_STEPS = ["reward_along_on_radius", "reward_against_on_radius", "reward_along_inside", "reward_outside",
                "reward_radial", "reward_near_origin"]
"""One step from a set pose and velocity: along, against, across the circle; on, inside, outside its radius."""
POINT_STEP = {"reward": 1e-6, "xy": 1e-5, "velocimeter": 1e-4, "lidar": 1e-5}
"""The Point's reward after one step (measured ≤ 3e-8; the rewards are 5e-4 to 0.055), its position
(m), velocimeter and lidar bins (measured ≤ 2e-7 m, 3e-6, 8e-7). The accelerometer and gyro are not
compared after a step: the turn servo's chatter (docs/safety_gymnasium.md) already moves them by up
to 9e-3 and 1.3e-4."""
CAR_STEP = {"reward": 1e-5, "xy": 1e-5, "velocimeter": 1e-4, "lidar": 1e-4}
"""The Car rolling (driven, coasting, reversing): reward, chassis position (m), velocimeter and
circle-lidar bins after the step. Measured ≤ 2.9e-7, 5.7e-7 m, 1.3e-5, 2.0e-5 (rewards 1e-3 to 0.06)."""
ANT_FLIGHT = {"reward": 1e-5, "xy": 1e-5, "velocimeter": 5e-4, "lidar": 5e-4}
"""The Ant thrown through the air from a set pose and velocity (spinning, with controls): reward,
torso position (m), velocimeter and circle-lidar bins after the step. Measured ≤ 1.4e-6, 2.2e-6 m,
1.5e-4, 1.3e-4 (the last two where it spins at 1.5 rad/s with its legs driven; ≤ 2e-7 and 6e-7 otherwise)."""
ANT_PUSHED = {"reward": 2e-3, "xy": 5e-3}
"""The standing Ant pushed sideways at 0.5 m/s, its feet sliding on the floor: reward and position
(measured 2.6e-4, 9.2e-4 m). A standing Ant is sensitive to everything: its state rounded to
float32 moves MuJoCo 4.0 in C (float64) by 1e-3 in one step."""
ONE_STEP = {"Point": dict.fromkeys([*REWARD_STEPS, "reward_spinning", "reward_far_corner"], POINT_STEP),
            "Car": dict.fromkeys(REWARD_STEPS, CAR_STEP),
            "Ant": {**dict.fromkeys(REWARD_STEPS, ANT_FLIGHT), "reward_standing_pushed": ANT_PUSHED}}

CROSSINGS = {"Point": Track({"xy": {None: 1e-3}, "lidar": {None: 0.02}, "reward": {None: 3e-3}}),
             "Car": Track({"xy": {None: 1e-4}}), "Ant": Track({"xy": {None: 1e-4}})}
"""The drives across a sigwall. The Point's 12 steps: its position (m), lidar bins, reward (measured
≤ 1.1e-4 m, 5.9e-3, 1.0e-3: from the third step the turn servo's chatter moves the velocity, by up
to 1.5e-2 m/s, which the reward reads); it comes no nearer than 2.9e-3 m to a sigwall on a step.
The Car's 12 steps: its position (measured ≤ 1.0e-6 m). The Ant's 5-step flights, landing beyond
the wall: its position (measured ≤ 3.8e-7 m); it ends 1.8 cm beyond the wall. So the cost per step
compares exactly."""

POINT_DYNAMICS = Track({"xy": {None: 0.02}, "yaw": {None: 0.05}, "lidar": {None: 0.05}, "reward": {None: 5e-3}},
                       horizon=150)
"""The Point's long rollout (3 s): its position (m), yaw (rad), lidar bins and reward. Measured:
≤ 1.7e-3 m, 5.3e-3 rad, 1.7e-2, 1.3e-3 (docs/safety_gymnasium.md); the costs (none: the agent
stays inside) compare exactly."""
CAR_DYNAMICS = Track({"xy": {25: 1e-4, 50: 1e-2, None: 0.1}, "heading": {25: 1e-3},
                      "reward": {25: 1e-4, None: 0.02}, "lidar": {25: 1e-3}}, horizon=150)
"""The Goal tests' long rollout from rest at (0.5, 0) facing +y: the chassis' position (m), heading
(rad), reward and circle-lidar bins over 25 steps, its position over 50, its position and reward
over all 150. Measured (level 0): ≤ 7.3e-6 m, 1.7e-5 rad, 1.0e-6, 2.3e-5 over 25 steps; 9.2e-4 m
over 50; 3.1e-2 m, 8.5e-3 over 150 (the lidar then 0.14, not bounded)."""
ANT_DYNAMICS = Track({"xy": {20: 0.03, 50: 0.2, None: 0.5}, "heading": {20: 0.1}, "reward": {20: 0.01, None: 0.05},
                      "lidar": {20: 0.15}}, horizon=100)
"""The walking gait of the Goal tests for 100 steps from standing at (0.6, −0.3), inside every
sigwall (no cost in either engine): the torso's position (m), heading (rad), reward and circle-lidar
bins over 20 steps, its position over 50, its position and the reward over all 100 (measured,
levels 0-2, both builds: ≤ 1.1e-2 m, 3.1e-2 rad, 4.6e-3, 6.7e-2; 6.0e-2 m; 0.14 m, 2.1e-2).
Chaotic, as Goal's (:data:`~tests.env.safety_gym_agents.ANT_WALK`); the circle lidar sees one point
0.3 to 1 m away across 16 bins, so a heading error of 3e-2 rad moves its bins by several times that."""
DYNAMICS = {"Point": POINT_DYNAMICS, "Car": CAR_DYNAMICS, "Ant": ANT_DYNAMICS}

STEPPED = [POINT.id("Circle", 0), POINT.id("Circle", 2), CAR.id("Circle", 2), ANT.id("Circle", 2)]
"""The levels whose step is compiled (about 45 s each for the Point on two busy cores)."""


@pytest.fixture(scope="module")
def replica(request) -> Replica:
    return Replica(request.param)


@pytest.mark.parametrize("replica", every_level("Circle", CAR), indirect=True)
def test_spaces_timing_and_definitions_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_spaces_and_keys(env, rec)
    assert env.observation_size == sum(n for _, n in rec["obs_keys"])
    assert env.dt == pytest.approx(rec["dt"]) and env.episode_length == rec["num_steps"] == 500
    lidars = [k.removesuffix("_lidar") for k, _ in rec["obs_keys"] if k.endswith("_lidar")]
    suite = env.suite
    assert [s.target for s in suite.sensors] == lidars == ["circle"]  # the sigwalls are not lidar-observed
    assert suite.sensors[0].max_dist == rec["lidar_max_dist"] and suite.circle.radius == rec["circle_radius"]
    assert rec["agent_placements"] == [[-suite.extent, -suite.extent, suite.extent, suite.extent]]
    assert suite.agent_keepout == rec["agent_keepout"] and not suite.objects
    walls = rec["sigwalls"]
    assert suite.sigwalls.count == (walls["num"] if walls else 0)
    if walls:
        assert walls["is_constrained"] and suite.sigwalls.x_bound == walls["locate_factor"]
        assert suite.sigwalls.y_bound == (walls["locate_factor"] if walls["num"] == 4 else None)
    m = env.mj_model
    for name in ["circle"] + [f"sigwall{i}" for i in range(suite.sigwalls.count)]:  # signs, not obstacles
        assert m.geom(name).contype == m.geom(name).conaffinity == 0


@pytest.mark.parametrize("replica", every_level("Circle"), indirect=True)
def test_observations_and_costs_on_recorded_states(replica):
    fidelity.assert_states(replica, counted=("out_of_boundary",))


@pytest.mark.slow
@pytest.mark.parametrize("replica", STEPPED, indirect=True)
def test_rewards_of_one_step_from_recorded_states(replica):
    agent = agent_of(replica.env_id)
    for name, bounds in ONE_STEP[agent.name].items():
        c = case(replica.record, "rollouts", name)
        out, (step,) = replica.rollout(c), c["steps"]
        assert out["reward"][0] == pytest.approx(step["reward"], abs=bounds["reward"]), name
        assert out["metrics"]["reward/circle"][0] == pytest.approx(step["reward"], abs=bounds["reward"]), name
        np.testing.assert_allclose(out["xy"][0], step["xy"], atol=bounds["xy"], err_msg=name)
        if "velocimeter" in bounds:
            np.testing.assert_allclose(out["obs"][0, 3:6], step["obs"][3:6], atol=bounds["velocimeter"], err_msg=name)
            np.testing.assert_allclose(out["obs"][0, agent.body:], step["obs"][agent.body:], atol=bounds["lidar"],
                                       err_msg=name)
        assert_step_costs(out, c)


@pytest.mark.slow
@pytest.mark.parametrize("replica", STEPPED, indirect=True)
@pytest.mark.parametrize("name", ["cross_x_plus", "cross_x_minus", "cross_y_minus"])
def test_costs_per_step_across_the_sigwalls(replica, name):
    out = fidelity.assert_rollout(replica, name, CROSSINGS[agent_of(replica.env_id).name])
    assert_step_costs(out, case(replica.record, "rollouts", name))


@pytest.mark.slow
@pytest.mark.parametrize("replica", [POINT.id("Circle", 0), POINT.id("Circle", 2)], indirect=True)
def test_costs_per_step_orbiting_on_the_radius(replica):
    out = fidelity.assert_rollout(replica, "orbit_on_radius", CROSSINGS["Point"])
    assert_step_costs(out, case(replica.record, "rollouts", "orbit_on_radius"))


@pytest.mark.slow
@pytest.mark.parametrize("replica", STEPPED, indirect=True)
def test_dynamics_stay_as_close_as_each_agents_sensitivity_allows(replica):
    fidelity.assert_rollout(replica, "dynamics", DYNAMICS[agent_of(replica.env_id).name])


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Circle", ANT, 0), indirect=True)
def test_resets_start_the_ant_within_safety_gymnasiums_placements(replica):
    env = replica.env  # reset's own draw, forwarded in C (Replica.resets)
    states = replica.resets(jax.random.split(jax.random.key(3), 32))
    root = np.asarray(jax.vmap(env.body.qpos)(states.data))
    xy = root[:, :2]
    assert np.all(np.abs(xy) <= env.suite.extent) and len({tuple(np.round(p, 4)) for p in xy}) == len(xy)
    np.testing.assert_allclose(root[:, 2], 0.18)
    assert np.all(np.asarray(states.cost) == 0)
    ref = 1.0 - np.linalg.norm(xy, axis=-1) / env.suite.sensors[0].max_dist  # the level Ant sees the origin
    np.testing.assert_allclose(np.asarray(states.obs)[:, ANT.body:].max(-1), ref, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Circle", POINT, 2), indirect=True)
def test_resets_start_the_point_within_safety_gymnasiums_placements(replica):
    """One reset program: every level places the agent alike."""
    env, suite = replica.env, replica.env.suite
    # the env's own reset program, compiled once (a vmapped one compiles twice as long here)
    states = jax.tree.map(lambda *x: np.stack(x), *[env.reset(k) for k in jax.random.split(jax.random.key(3), 64)])
    xy = np.asarray(states.data.xpos[:, env.body.torso_id, :2])
    rot = np.asarray(states.data.xmat[:, env.body.torso_id])
    yaw = np.arctan2(rot[:, 1, 0], rot[:, 0, 0])
    (lo_x, lo_y, hi_x, hi_y), = replica.record["agent_placements"]
    assert np.all((xy >= [lo_x, lo_y]) & (xy <= [hi_x, hi_y]))
    assert len({tuple(np.round(p, 4)) for p in xy}) == len(xy)  # a fresh start every episode
    assert xy.min(0) == pytest.approx([lo_x, lo_y], abs=0.2) and xy.max(0) == pytest.approx([hi_x, hi_y], abs=0.2)
    assert np.ptp(np.mod(yaw, 2 * np.pi)) > 5.0  # the heading uniform over the full turn
    np.testing.assert_array_equal(np.asarray(states.info["task"]["circle"]), np.zeros((64, 1, 2)))
    assert np.all(np.asarray(states.cost) == 0)  # Safety-Gymnasium asserts no cost at the start
    ref = 1.0 - np.linalg.norm(xy, axis=-1) / suite.sensors[0].max_dist  # the circle lidar sees the origin
    np.testing.assert_allclose(np.asarray(states.obs)[:, POINT.body:].max(-1), ref, atol=1e-5)


@pytest.mark.parametrize("agent", navigators())
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face(agent):
    fidelity.assert_served("Circle", agent, SafetyCircle)
    assert crax.parameters(agent.id("Circle", 1))["episode_length"].default == 500
    assert safety_gymnasium.make(agent.id("Circle", 2)).unwrapped.env.episode_length == 500


@pytest.mark.slow
def test_the_points_circle_parameters_registry_info_and_unserved_ids():
    circle1 = POINT.id("Circle", 1)
    params = crax.parameters(circle1)
    assert params["episode_length"].default == 500
    assert crax.parameters("SafetyPointGoal1-v0")["episode_length"].default == 1000
    assert (params["x_boundary"].default, params["y_boundary"].default) == (1.125, None)
    assert params["lidar_max_dist"].default == 6.0
    assert TaskEnv(SafetyCircle(POINT.body_cls(), 2)).episode_length == 500  # the suite's length, not make's
    assert crax.make(POINT.id("Circle", 2), episode_length=7, y_boundary=2.0).episode_length == 7
    assert register_envs([circle1]) == ["crax/" + circle1] and ("crax/" + circle1) in gymnasium.registry
    face = safety_gymnasium.make(circle1)  # built, not compiled (the replicas compile the step)
    assert face.unwrapped.env.episode_length == 500
    info = _safety_gym_info(face, {"cost": 1.0, "cost/out_of_boundary": 1.0})
    assert info["cost_out_of_boundary"] == info["cost_sum"] == 1.0  # Safety-Gymnasium's info keys
    for unserved in ("SafetyPointCircle3-v0", "SafetyPointCircle3Vision-v0"):
        with pytest.raises(ValueError, match="SafetyPointCircle0-v0, SafetyPointCircle1-v0, SafetyPointCircle2-v0"):
            crax.make(unserved)
