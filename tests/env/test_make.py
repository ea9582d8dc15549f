"""`crax.make`: ids, validation messages, overrides, observation/action sizes and level contents.

Nothing here compiles an env program: sizes and task shapes come from ``jax.eval_shape``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.core.env import Vmap
from crax.suites.task_env import NONFINITE_METRICS
from crax.suites.velocity import LEVEL_FACTORS

KEY = jax.random.key(0)


# ---------------------------------------------------------------------------------------------
# Bad input: ValueError with a message that names the valid choices.


@pytest.mark.parametrize(
    ("env_id", "expected"),
    [
        ("Nope1", ["Goal", "Velocity"]),  # unknown id: no suite in it
        ("PointFly1", ["Goal", "Velocity"]),  # unknown suite
        ("PointGoal", ["PointGoal1"]),  # no level: lists valid ids
        ("Goal1", ["HalfCheetah", "Point"]),  # no body
        ("ReacherGoal1", ["Goal", "Ant", "Humanoid", "Point", "Spider"]),  # an arm is not a navigation body
        ("HopperGoal1", ["Goal", "Ant", "Humanoid", "Point", "Spider"]),
        ("PointReach1", ["Reach", "Reacher"]),
        ("SpiderSpiderLegs1", ["SpiderLegs1", "SpiderLegs3"]),  # the suite names its body
        ("HumanoidHumanoidHeight2", ["HumanoidHeight1"]),
        ("HalfCheetahGoal1", ["Goal", "Point"]),  # HalfCheetah is not a navigation body
        ("PointGoal4", ["1, 2, 3"]),
        ("PointGoal0", ["1, 2, 3"]),
        ("HalfCheetahVelocity9", ["1, 2, 3"]),
    ],
)
def test_bad_id_raises_value_error_naming_valid_choices(env_id, expected):
    with pytest.raises(ValueError) as err:
        crax.make(env_id)
    for word in expected:
        assert word in str(err.value)


def test_unknown_body_names_valid_bodies():
    with pytest.raises(ValueError, match="'Foo'") as err:
        crax.make("FooGoal1")
    assert "HalfCheetah" in str(err.value) and "Point" in str(err.value)


def test_unknown_body_message_is_grammatical():  # was "unknown bodie 'Foo'" (kind[:-1] of "bodies")
    with pytest.raises(ValueError, match=r"unknown body 'Foo'"):
        crax.make("FooGoal1")


def test_non_string_id_raises_value_error():
    with pytest.raises(ValueError, match="PointGoal1"):
        crax.make(123)  # type: ignore[arg-type]


def test_unknown_parameter_names_valid_parameters():
    with pytest.raises(ValueError, match="nope") as err:
        crax.make("PointGoal1", nope=1)
    for name in ("goal_radius", "lidar", "episode_length", "collision_cost"):
        assert name in str(err.value)
    with pytest.raises(ValueError, match="cost_mode"):
        crax.make("HalfCheetahVelocity1", goal_radius=0.3)  # a Goal parameter is not a Velocity one


def test_bad_lidar_names_choices():
    with pytest.raises(ValueError, match="'laser'") as err:
        crax.make("PointGoal1", lidar="laser")
    assert "pseudo" in str(err.value) and "natural" in str(err.value)


def test_bad_cost_mode_names_choices():
    with pytest.raises(ValueError, match="'squared'") as err:
        crax.make("HalfCheetahVelocity1", cost_mode="squared")
    assert "binary" in str(err.value) and "hinge" in str(err.value)


def test_bad_episode_length():
    with pytest.raises(ValueError, match="episode_length"):
        crax.make("PointGoal1", episode_length=0)


def test_wrong_action_shape_raises():
    env = crax.make("PointGoal1")
    state = env.state_shapes
    for bad in (jnp.zeros(3), jnp.zeros(()), jnp.zeros((1, 2))):
        with pytest.raises(ValueError, match=r"\(2,\)"):
            env.step(state, bad)


@pytest.mark.slow
def test_vmap_wrong_batch_raises():
    env = Vmap(crax.make("HalfCheetahVelocity1"), 3)
    state = env.state_shapes
    assert state.obs.shape == (3, 18)
    for bad in (jnp.zeros((2, 6)), jnp.zeros(6), jnp.zeros((3, 5))):
        with pytest.raises(ValueError, match=r"\(3, 6\)"):
            env.step(state, bad)
    with pytest.raises(ValueError, match="num_envs"):
        Vmap(crax.make("HalfCheetahVelocity1"), 0)


# ---------------------------------------------------------------------------------------------
# Ids, sizes and overrides.


def test_env_ids_are_exactly_the_buildable_ones():
    ids = crax.env_ids()  # plugins installed in the environment may add more
    builtin = {f"PointGoal{i}" for i in (1, 2, 3)} | {f"HalfCheetahVelocity{i}" for i in (1, 2, 3)}
    assert builtin <= set(ids)
    assert {"PointVelocity1", "AntGoal3", "HumanoidVelocity2", "SpiderGoal1", "ReacherReach1"} <= set(ids)
    assert not {"HalfCheetahGoal1", "ReacherGoal1", "HopperGoal1", "PointReach1"} & set(ids)
    from crax.tasks.catalog import crax_ids

    for env_id in crax_ids():  # Safety-Gymnasium's ids: tests/env/test_safety_goal.py
        body, suite, level = crax.parse_id(env_id)
        stem = suite.name if suite.default_body == body.name else body.name + suite.name  # SpiderLegs1
        assert f"{stem}{level}" == env_id


@pytest.mark.parametrize(
    ("env_id", "obs", "act", "dt"),
    [
        # Levels change counts and sizes, never the layout: each family at one level, the levels spread
        # over the families.
        *[(f"PointGoal{i}", 62, 2, 0.08) for i in (1, 3)],
        ("HalfCheetahVelocity2", 18, 6, 0.05),
        ("PointVelocity1", 12, 2, 0.08),
        ("AntVelocity1", 27, 8, 0.05),
        ("HumanoidVelocity1", 376, 17, 0.015),
        ("Walker2dVelocity1", 17, 6, 0.008),
        ("HopperVelocity1", 11, 3, 0.008),
        ("SpiderVelocity3", 35, 12, 0.05),
        ("AntGoal1", 27 + 50, 8, 0.05),
        ("HumanoidGoal2", 376 + 50, 17, 0.015),
        ("SpiderGoal3", 35 + 50, 12, 0.05),
        ("ReacherReach1", 11 + 16, 2, 0.02),
    ],
)
def test_observation_and_action_sizes(env_id, obs, act, dt):
    env = crax.make(env_id)
    assert env.observation_size == obs
    assert env.action_size == act
    assert env.episode_length == 1000
    assert env.dt == pytest.approx(dt)
    state = env.state_shapes  # the trace observation_size read
    assert state.obs.shape == (obs,) and state.obs.dtype == jnp.float32
    assert state.reward.shape == state.cost.shape == state.done.shape == ()
    assert state.reward.dtype == state.cost.dtype == jnp.float32


@pytest.mark.parametrize("env_id", ["PointGoal1", pytest.param("SafetyPointButton2-v0", marks=pytest.mark.slow)])
def test_state_shapes_are_the_traced_resets(env_id):
    """state_shapes skips the physics in its trace (crax.suites.task_env.TaskEnv.state_shapes): every leaf as
    a traced reset gives it (a Button with gremlins: mocap bodies and contacts)."""
    env = crax.make(env_id)
    full, quick = jax.eval_shape(env.reset, KEY), env.state_shapes
    assert jax.tree.structure(full) == jax.tree.structure(quick)
    for (path, a), b in zip(jax.tree.leaves_with_path(full), jax.tree.leaves(quick), strict=True):
        assert (a.shape, a.dtype) == (b.shape, b.dtype), jax.tree_util.keystr(path)


def test_point_goal_observation_layout():
    env = crax.make("PointGoal1")
    data = env.state_shapes.data
    sizes = [jax.eval_shape(env.body.observe, data).shape[0]] + [s.size for s in env.suite.sensors]
    assert sizes == [12, 16, 16, 2, 16]  # body, goal lidar, hazard lidar, goal compass, 8 hazard compasses
    assert [type(s).__name__ for s in env.suite.sensors] == ["Lidar", "Lidar", "Compass", "Compass"]
    natural = crax.make("PointGoal1", lidar="natural")
    assert [type(s).__name__ for s in natural.suite.sensors] == ["NaturalLidar", "NaturalLidar", "Compass", "Compass"]
    assert natural.observation_size == 62


def test_overrides_reach_the_task():
    env = crax.make("PointGoal1", goal_radius=0.5, episode_length=7, collision_cost=4.0, cost_scale=1.5, lidar_bins=8)
    assert env.episode_length == 7
    suite = env.suite
    assert float(suite.goal_radius[...]) == 0.5
    goal_geom = env.mj_model.geom("goal/0")
    assert goal_geom.size[0] == pytest.approx(0.5)
    contact = [c for c in suite.constraints if c.term == "contact"][0]
    assert float(contact.collision_cost[...]) == 4.0
    proximity = [c for c in suite.constraints if c.term == "cylinder_zones"][0]
    assert float(proximity.cost_scale[...]) == 1.5
    assert env.observation_size == 12 + 8 + 8 + 2 + 16
    default, radius = crax.make("PointGoal1"), crax.parameters("PointGoal1")["goal_radius"].default
    assert float(default.suite.goal_radius[...]) == pytest.approx(radius)
    assert default.mj_model.geom("goal/0").size[0] == pytest.approx(radius)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_velocity_threshold_per_level(level):
    tau = 3.21 * {1: 1.0, 2: 0.75, 3: 0.5}[level]
    assert LEVEL_FACTORS[level] == {1: 1.0, 2: 0.75, 3: 0.5}[level]
    for mode in ("binary", "hinge"):
        env = crax.make(f"HalfCheetahVelocity{level}", cost_mode=mode)
        (constraint,) = env.suite.constraints
        assert float(constraint.threshold[...]) == pytest.approx(tau, rel=1e-6)
        assert float(constraint.weight[...]) == 1.0
        assert constraint.mode == mode
        assert float(env.suite.reward_scaler[...]) == pytest.approx(0.01)
    env = crax.make(f"HalfCheetahVelocity{level}", velocity_threshold=0.3)
    assert float(env.suite.constraints[0].threshold[...]) == pytest.approx(0.3)


# ---------------------------------------------------------------------------------------------
# Levels: hazard counts and sizes in the compiled model and in info["task"].

CYL = mujoco.mjtGeom.mjGEOM_CYLINDER
BOX = mujoco.mjtGeom.mjGEOM_BOX

# label -> (count, geom type, xy size, half height or None for flat zones, collides)
LEVELS = {
    1: {"cylinder_zones": (12, CYL, 0.4, None, False)},
    2: {"cylinder_zones": (8, CYL, 0.4, None, False), "cylinder_pillars": (8, CYL, 0.3, 0.2, True)},
    3: {
        "cube_zones": (6, BOX, 0.3, None, False),
        "cylinder_zones": (6, CYL, 0.35, None, False),
        "cube_pillars": (4, BOX, 0.25, 0.25, True),
        "cylinder_pillars": (4, CYL, 0.25, 0.2, True),
    },
}


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.slow
def test_goal_levels_hazard_counts_and_sizes(level):
    goal_radius, hazards = crax.parameters(f"PointGoal{level}")["goal_radius"].default, LEVELS[level]
    env = crax.make(f"PointGoal{level}")
    m = env.mj_model
    names = [m.geom(i).name for i in range(m.ngeom)]

    assert m.geom("goal/0").size[0] == pytest.approx(goal_radius)
    assert float(env.suite.goal_radius[...]) == pytest.approx(goal_radius)
    assert m.geom("goal/0").contype == 0 and m.geom("goal/0").conaffinity == 0

    labels = {n.split("/")[0] for n in names if "/" in n and not n.startswith("agent/")}
    assert labels == {"goal", *hazards}
    for label, (count, gtype, size, half_height, collides) in hazards.items():
        geoms = [n for n in names if n.startswith(label + "/") and not n.endswith(("/ray", "/collision"))]
        assert len(geoms) == count, label
        for n in geoms:
            g = m.geom(n)
            assert g.type == gtype
            assert g.size[0] == pytest.approx(size)
            if gtype == BOX:
                assert g.size[1] == pytest.approx(size)
            if half_height is not None:  # pillars stand on the floor with their full height
                assert g.size[-1 if gtype == BOX else 1] == pytest.approx(half_height)
                assert env.suite.placeables[label].z == pytest.approx(half_height)  # mocap height
            if f"{n}/collision" in names:  # cylinders collide as capsules over the same height (DECISIONS 39)
                proxy = m.geom(f"{n}/collision")
                assert proxy.type == mujoco.mjtGeom.mjGEOM_CAPSULE and proxy.rgba[3] == 0
                assert proxy.size[:2] == pytest.approx([size, half_height]) and np.all(proxy.pos == g.pos)
                assert not (g.contype or g.conaffinity) and collides, n
                g = proxy
            assert bool(g.contype or g.conaffinity) == collides, n

    contact_geoms = {n for n in names if n.startswith("wall_")}
    assert contact_geoms == {"wall_east", "wall_west", "wall_north", "wall_south"}
    terms = {c.term for c in env.suite.constraints}
    assert terms == {"contact"} | {label for label, h in hazards.items() if not h[4]}
    (contact,) = [c for c in env.suite.constraints if c.term == "contact"]
    expected = {f"{label}/{i}" + ("/collision" if label == "cylinder_pillars" else "")
                for label, h in hazards.items() if h[4] for i in range(h[0])} | contact_geoms
    assert set(contact.geoms) == expected
    assert float(contact.collision_cost[...]) == 3.0

    state = env.state_shapes
    task = state.info["task"]
    assert task["goal"].shape == (1, 2)
    for label, (count, *_rest) in hazards.items():
        assert task[label].shape == (count, 2)
    assert task["hazards"].shape == (sum(h[0] for h in hazards.values()), 2)
    assert set(state.metrics) == {
        "reward/distance", "reward/goal", "goals_reached", "cost/contact", *NONFINITE_METRICS,
        *(f"cost/{label}" for label, h in hazards.items() if not h[4]),
    }


def test_walls_stand_at_three_metres():
    m = crax.make("PointGoal1").mj_model
    for name, axis, sign in [("wall_east", 0, 1), ("wall_west", 0, -1), ("wall_north", 1, 1), ("wall_south", 1, -1)]:
        g = m.geom(name)
        assert g.pos[axis] == pytest.approx(3.0 * sign)
        normal = np.zeros(3)
        mujoco.mju_rotVecQuat(normal, np.array([0.0, 0.0, 1.0]), g.quat)
        assert normal[axis] == pytest.approx(-sign)  # faces the arena's centre


# ---------------------------------------------------------------------------------------------
# Bodies in the scene (SPEC section 2).


def test_point_body_in_scene():
    env = crax.make("PointGoal1")
    m, body = env.mj_model, env.body
    assert m.opt.timestep == pytest.approx(0.02) and body.frame_skip == 4
    sphere = m.geom("agent/sphere")
    assert sphere.type == mujoco.mjtGeom.mjGEOM_SPHERE and sphere.size[0] == pytest.approx(0.1)
    # the front box is drawn; it collides through an invisible sphere inscribed in it (DECISIONS 41)
    arrow, proxy = m.geom("agent/arrow"), m.geom("agent/arrow_collision")
    assert arrow.contype == 0 and arrow.conaffinity == 0 and proxy.rgba[3] == 0
    assert (proxy.contype, proxy.conaffinity) == (sphere.contype, sphere.conaffinity)
    np.testing.assert_allclose(proxy.pos, arrow.pos) and np.testing.assert_allclose(proxy.size[0], arrow.size[0])
    assert m.dof_armature[2] == pytest.approx(0.0015)  # the turn hinge (DECISIONS 40)
    assert [m.joint(j).type for j in range(m.njnt)] == [mujoco.mjtJoint.mjJNT_SLIDE] * 2 + [mujoco.mjtJoint.mjJNT_HINGE]
    forward, turn = m.actuator("agent/forward"), m.actuator("agent/turn")
    assert forward.gear[0] == pytest.approx(0.3) and turn.gear[0] == pytest.approx(0.3)
    assert turn.gainprm[0] == pytest.approx(1.0) and turn.biasprm[2] == pytest.approx(-1.0)  # kv 1
    for a in (forward, turn):
        np.testing.assert_allclose(a.forcerange, [-0.05, 0.05])
        np.testing.assert_allclose(a.ctrlrange, [-1.0, 1.0])
    # the sphere floats (no floor contact) but touches walls and collidable hazards
    from crax.core.scene import Category

    assert sphere.contype == Category.AGENT_FLOATING
    assert not sphere.conaffinity & Category.FLOOR and not m.geom("floor").conaffinity & Category.AGENT_FLOATING
    assert sphere.conaffinity & Category.WALL and sphere.conaffinity & Category.HAZARD
    assert body.healthy_z == (0.05, 0.3) and body.reset_noise == 0.005


def test_actions_are_clipped_and_scaled_to_the_control_range():
    body = crax.make("HalfCheetahVelocity1").body
    np.testing.assert_allclose(np.asarray(body.ctrl(jnp.asarray([2.0, -3.0, 0.5, -0.5, 1.0, 0.0]))),
                               [1.0, -1.0, 0.5, -0.5, 1.0, 0.0])
    body.ctrl_range = ((0.0, 2.0),) * 6  # a non-symmetric range maps [-1, 1] onto it
    np.testing.assert_allclose(np.asarray(body.ctrl(jnp.asarray([-1.0, 0.0, 1.0, 5.0, -0.5, 0.5]))),
                               [0.0, 1.0, 2.0, 2.0, 0.5, 1.5])
