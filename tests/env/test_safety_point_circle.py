"""Safety-Gymnasium's Point Circle 0-2 served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself; docs/safety_gymnasium.md lists the tolerances below and what was measured.
One env per level (module-scoped): its hand-placement program at every level, its step at levels
0 and 2 (:data:`ROLLOUT_LEVELS`), one reset program. The scene is the Point alone (the circle and
the sigwalls collide with nothing).
"""

from __future__ import annotations

import gymnasium
import jax
import numpy as np
import pytest

import crax
from crax.bodies.safety_point import SafetyGymPoint
from crax.gymnasium import register_envs
from crax.gymnasium import safety as safety_gymnasium
from crax.gymnasium.safety.make_args import resolve_id
from crax.gymnasium.safety.wrappers import _safety_gym_info
from crax.suites.safety_gym import SafetyCircle
from crax.suites.task_env import TaskEnv
from tests.env.safety_gym_reference import Replica, assert_recorded_costs, assert_spaces, assert_step_costs, case

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

SENSOR_ATOL = 1e-4
"""Body sensors on a set state (MuJoCo 2.3.3 in float64 vs MJX in float32; measured ≤ 1.7e-5)."""
LIDAR_ATOL = 1e-5
"""Circle lidar bins on a set state (measured ≤ 1e-6)."""
REWARD_ATOL = 1e-6
"""Reward of one step from a set pose and velocity (measured ≤ 3e-8; the rewards are 5e-4 to 0.055)."""
STEP_ATOL = {"xy": 1e-5, "velocimeter": 1e-4, "lidar": 1e-5}
"""The agent's position (m), velocimeter and lidar bins after that one step (measured ≤ 2e-7 m,
3e-6, 8e-7). The accelerometer and gyro are not compared after a step: the turn servo's chatter
(docs/safety_gymnasium.md) already moves them by up to 9e-3 and 1.3e-4."""
CROSSING = {"xy": 1e-3, "lidar": 0.02, "reward": 3e-3}
"""Along the 12 steps across a sigwall: the agent's position (m), lidar bins, reward (measured
≤ 1.1e-4 m, 5.9e-3, 1.0e-3: from the third step the turn servo's chatter moves the velocity, by
up to 1.5e-2 m/s, which the reward reads). The agent comes no nearer than 2.9e-3 m to a sigwall on
a step, so the cost per step compares exactly."""
DYNAMICS = {"horizon": 150, "xy": 0.02, "yaw": 0.05, "lidar": 0.05, "reward": 5e-3}
"""The long rollout: bounds on the agent's position (m) and yaw (rad) errors, the lidar bins' and
the reward's over 150 steps (3 s). Measured: ≤ 1.7e-3 m, 5.3e-3 rad, 1.7e-2, 1.3e-3
(docs/safety_gymnasium.md); the costs (none: the agent stays inside) compare exactly."""
REWARD_STEPS = ["reward_along_on_radius", "reward_against_on_radius", "reward_along_inside", "reward_outside",
                "reward_radial", "reward_near_origin", "reward_spinning", "reward_far_corner"]
CROSSINGS = ["orbit_on_radius", "cross_x_plus", "cross_x_minus", "cross_y_minus"]
ROLLOUT_LEVELS = [0, 2]
"""Levels whose step is compiled (about 45 s each on two busy cores): level 1 differs from level 2
only in its y sigwalls' absence, whose cost the recorded states check at every level."""

ID = "SafetyPointCircle{}-v0"


@pytest.fixture(scope="module", params=[0, 1, 2])
def replica(request) -> Replica:
    return Replica(ID.format(request.param))


@pytest.mark.slow
def test_spaces_timing_and_definitions_are_safety_gymnasiums(replica):
    rec, env = replica.record, replica.env
    assert_spaces(env, rec)
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


@pytest.mark.slow
def test_observations_and_costs_on_recorded_states(replica):
    for c in replica.record["states"]:
        state = replica.arrange(c)
        ref, got = np.asarray(c["obs"]), np.asarray(state.obs)
        np.testing.assert_allclose(got[:12], ref[:12], atol=SENSOR_ATOL, err_msg=c["name"])
        np.testing.assert_allclose(got[12:], ref[12:], atol=LIDAR_ATOL, err_msg=c["name"])
        assert_recorded_costs(state, c, counted=("out_of_boundary",))


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.slow
def test_rewards_of_one_step_from_recorded_states(replica):
    for name in REWARD_STEPS:
        c = case(replica.record, "rollouts", name)
        out, (step,) = replica.rollout(c), c["steps"]
        assert out["reward"][0] == pytest.approx(step["reward"], abs=REWARD_ATOL), name
        assert out["metrics"]["reward/circle"][0] == pytest.approx(step["reward"], abs=REWARD_ATOL), name
        np.testing.assert_allclose(out["xy"][0], step["xy"], atol=STEP_ATOL["xy"], err_msg=name)
        np.testing.assert_allclose(out["obs"][0, 3:6], step["obs"][3:6], atol=STEP_ATOL["velocimeter"], err_msg=name)
        np.testing.assert_allclose(out["obs"][0, 12:], step["obs"][12:], atol=STEP_ATOL["lidar"], err_msg=name)
        assert_step_costs(out, c)


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
@pytest.mark.parametrize("name", CROSSINGS)
def test_costs_per_step_across_the_sigwalls(replica, name):
    c = case(replica.record, "rollouts", name)
    out = replica.rollout(c)
    assert_step_costs(out, c)
    assert np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in c["steps"]]), axis=-1).max() < CROSSING["xy"]
    assert np.abs(out["obs"][:, 12:] - np.asarray([s["obs"] for s in c["steps"]])[:, 12:]).max() < CROSSING["lidar"]
    assert np.abs(out["reward"] - np.asarray([s["reward"] for s in c["steps"]])).max() < CROSSING["reward"]


@pytest.mark.parametrize("replica", ROLLOUT_LEVELS, indirect=True)
def test_dynamics_stay_close_to_safety_gymnasiums(replica):
    c = case(replica.record, "rollouts", "dynamics")
    out = replica.rollout(c)
    h = DYNAMICS["horizon"]
    steps = c["steps"][:h]
    assert np.linalg.norm(out["xy"][:h] - np.asarray([s["xy"] for s in steps]), axis=-1).max() < DYNAMICS["xy"]
    assert np.abs(out["yaw"][:h] - np.asarray([s["yaw"] for s in steps])).max() < DYNAMICS["yaw"]
    assert np.abs(out["obs"][:h, 12:] - np.asarray([s["obs"] for s in steps])[:, 12:]).max() < DYNAMICS["lidar"]
    assert np.abs(out["reward"][:h] - np.asarray([s["reward"] for s in steps])).max() < DYNAMICS["reward"]
    np.testing.assert_array_equal(out["cost"][:h], [s["cost"] for s in steps])


@pytest.mark.parametrize("replica", [2], indirect=True)  # one reset program: every level places the agent alike
@pytest.mark.slow
def test_resets_start_the_agent_within_safety_gymnasiums_placements(replica):
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
    np.testing.assert_allclose(np.asarray(states.obs)[:, 12:].max(-1), ref, atol=1e-5)


def test_ids_are_served_by_make_list_the_registry_and_the_safety_gymnasium_face():
    served = [ID.format(i) for i in (0, 1, 2)]
    assert set(served) <= set(crax.env_ids())
    assert all(crax.parse_id(i)[1] is SafetyCircle for i in served)
    params = crax.parameters(ID.format(1))
    assert params["episode_length"].default == 500 and crax.parameters("SafetyPointGoal1-v0")["episode_length"].default == 1000
    assert (params["x_boundary"].default, params["y_boundary"].default, params["lidar_max_dist"].default) == (1.125, None, 6.0)
    assert resolve_id(ID.format(1)) == ID.format(1) and resolve_id(ID.format(1), paper_variant=True) == "PointCircle1"
    assert TaskEnv(SafetyCircle(SafetyGymPoint(), 2)).episode_length == 500  # the suite's length, not make's
    assert crax.make(ID.format(2), episode_length=7, y_boundary=2.0).episode_length == 7
    assert register_envs([ID.format(1)]) == ["crax/" + ID.format(1)] and ("crax/" + ID.format(1)) in gymnasium.registry
    face = safety_gymnasium.make(ID.format(1))  # built, not compiled (the replicas compile the step)
    assert face.unwrapped.env.id == ID.format(1) and face.unwrapped.env.episode_length == 500
    assert face.observation_space.shape == (28,) and face.observation_space.dtype == np.float64
    info = _safety_gym_info(face, {"cost": 1.0, "cost/out_of_boundary": 1.0})
    assert info["cost_out_of_boundary"] == info["cost_sum"] == 1.0  # Safety-Gymnasium's info keys
    assert safety_gymnasium.make(ID.format(1), paper_variant=True).unwrapped.env.id == "PointCircle1"
    for unserved in ("SafetyPointCircle3-v0", "SafetyPointCircle1Vision-v0"):
        with pytest.raises(ValueError, match="SafetyPointCircle0-v0, SafetyPointCircle1-v0, SafetyPointCircle2-v0"):
            crax.make(unserved)

