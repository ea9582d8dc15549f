"""Constraint terms and sensors added to a task by name (``crax.make(..., constraints=, sensors=)``):
their costs and observations at hand-placed states, the built-in general terms against hand
computation, and the errors for bad names, parameters and fits.

Compiled programs: one PointGoal1 with an added ActionEnergy term and Distance sensor (reset and
step), and the plain PointGoal1's cost and observation functions on the same states."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.costs import ActionEnergy, JointLimit
from crax.sensors import Context, Sensor
from crax.suites.goal import Goal
from crax.suites.task_env import TaskEnv
from crax.tasks import compose

ADDED = dict(constraints={"action_energy": {"weight": 0.5}}, sensors={"Distance": {"target": "goal", "scale": 2.0}})


@functools.cache
def composed():
    """PointGoal1 with an action-energy term and a goal-distance sensor added, and its jitted reset and step."""
    env = crax.make("PointGoal1", **ADDED)
    return env, jax.jit(env.reset), jax.jit(env.step)


@functools.cache
def plain():
    """The plain PointGoal1 and a jitted ``(costs, observation)`` of a physics state and task state."""
    env = crax.make("PointGoal1")

    def terms(data, task):
        ctx = env.suite.context(env.mjx_model, data, task)
        return env.suite.costs(ctx), env.suite.observe(ctx)

    return env, jax.jit(terms)


def hand_placed():
    """A reset state with the agent at rest on the first hazard zone (so the zone cost is > 0) and
    the goal 0.5 m away at (+0.3, +0.4)."""
    env, reset, _ = composed()
    state = reset(jax.random.key(3))
    task = dict(state.info["task"])
    hazard = task["cylinder_zones"][0]
    body = env.body
    qpos = body.place(jnp.asarray(body.qpos0, jnp.float32), hazard, jnp.zeros(()))
    data = body.write_state(state.data, qpos, jnp.zeros(body.qvel_adr[1] - body.qvel_adr[0]))
    task["goal"] = (hazard + jnp.asarray([0.3, 0.4]))[None]
    return state.replace(data=data, info={**state.info, "task": task})


@pytest.mark.parametrize(("action", "applied"), [((0.6, -2.0), (0.6, -1.0)), ((math.nan, 0.5), (0.0, 0.5))])
@pytest.mark.slow
def test_an_added_term_changes_the_total_cost_by_exactly_that_term(action, applied):
    env, _, step = composed()
    _, plain_terms = plain()
    state = step(hand_placed(), jnp.asarray(action, jnp.float32))
    own, _ = plain_terms(state.data, state.info["task"])
    own = {k: float(v) for k, v in own.items()}
    energy = 0.5 * sum(a * a for a in applied)  # w·‖a‖², a clipped to [-1, 1], non-finite entries as 0
    assert own["cylinder_zones"] > 0  # the agent stands in a zone: the suite's own cost is not zero
    assert set(own) == {"cylinder_zones", "contact"}
    assert float(state.metrics["cost/action_energy"]) == pytest.approx(energy, rel=1e-6)
    for term, value in own.items():
        assert float(state.metrics[f"cost/{term}"]) == pytest.approx(value, rel=1e-6)
    assert float(state.cost) == pytest.approx(sum(own.values()) + energy, rel=1e-6)
    assert float(state.metrics["env/nonfinite_action"]) == float(not all(map(math.isfinite, action)))


def test_an_added_sensor_extends_the_observation_with_its_value():
    env, _, step = composed()
    base, plain_terms = plain()
    assert env.observation_size == base.observation_size + 1  # both by jax.eval_shape of reset
    assert env.state_shapes.obs.shape == (base.observation_size + 1,)
    state = step(hand_placed(), jnp.zeros(2))
    _, own_obs = plain_terms(state.data, state.info["task"])
    agent = np.asarray(env.body.position(state.data))[:2]
    goal = np.asarray(state.info["task"]["goal"])[0]
    np.testing.assert_allclose(np.linalg.norm(goal - agent), 0.5, atol=0.01)  # the hand-placed 0.5 m, barely moved
    obs = np.asarray(state.obs)
    np.testing.assert_allclose(obs[-1], np.linalg.norm(goal - agent) / 2.0, rtol=1e-5)  # ‖goal − agent‖ / scale
    np.testing.assert_allclose(obs[:-1], np.asarray(own_obs), rtol=1e-6, atol=1e-7)  # the suite's own, unchanged


def test_added_components_join_the_suites_lists_and_metrics():
    env, _, _ = composed()
    assert [c.term for c in env.suite.constraints] == ["cylinder_zones", "contact", "action_energy"]
    assert type(env.suite.sensors[-1]).__name__ == "Distance"
    metrics = env.state_shapes.metrics
    assert {"cost/cylinder_zones", "cost/contact", "cost/action_energy"} <= set(metrics)
    assert type(crax.make("PointGoal1").suite.sensors[-1]).__name__ == "Compass"  # the suite itself is untouched


# ---- the built-in general terms -------------------------------------------------------------------


def test_action_energy_is_weight_times_squared_norm():
    term = ActionEnergy(weight=2.0)
    ctx = Context(model=None, data=None, agent_xy=jnp.zeros(2), agent_yaw=jnp.zeros(()), task={},
                  action=jnp.asarray([0.5, -0.5, 1.0]))
    assert float(term.cost(ctx)) == pytest.approx(2.0 * (0.25 + 0.25 + 1.0))
    with pytest.raises(ValueError, match="Context.action"):
        term.cost(ctx.replace(action=None))


HOPPER_RANGES = {"agent/thigh": (-2.61799, 0.0), "agent/leg": (-2.61799, 0.0), "agent/foot": (-0.785398, 0.785398)}
"""The limited joints of hopper.xml (its root joints rootx, rootz, rooty are unlimited)."""


def test_joint_limit_proximity_against_hand_computation():
    env = crax.make("HopperVelocity1", constraints={"JointLimit": {"weight": 0.5, "margin": 0.2}})
    term = env.suite.constraints[-1]
    assert isinstance(term, JointLimit) and term.joints == tuple(HOPPER_RANGES)
    q = {"agent/thigh": -0.05, "agent/leg": -1.308995, "agent/foot": 0.9}  # near a limit, mid-range, past a limit
    qpos = np.asarray(env.mj_model.qpos0, np.float32).copy()
    for name, value in q.items():
        qpos[env.mj_model.joint(name).qposadr[0]] = value
    expected = 0.0
    for name, (lo, hi) in HOPPER_RANGES.items():
        d = abs(q[name] - (lo + hi) / 2) / ((hi - lo) / 2)
        expected += max(0.0, d - (1 - 0.2)) / 0.2
    expected *= 0.5
    assert expected > 0.5  # thigh (0.81) and foot (1.73) cost, leg none
    data = env._data0.replace(qpos=jnp.asarray(qpos))
    ctx = Context(model=env.mjx_model, data=data, agent_xy=jnp.zeros(2), agent_yaw=jnp.zeros(()),
                  task={"velocity": jnp.zeros(())}, action=jnp.zeros(env.action_size))
    assert float(term.cost(ctx)) == pytest.approx(expected, rel=1e-5)
    costs = env.suite.costs(ctx)
    assert set(costs) == {"velocity", "joint_limit"} and float(costs["joint_limit"]) == pytest.approx(expected, rel=1e-5)
    mid = data.replace(qpos=data.qpos.at[jnp.asarray(term.qpos_adr)].set(jnp.asarray(term.middle)))
    assert float(term.cost(ctx.replace(data=mid))) == 0.0


# ---- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(constraints={"energy": {}}), r"unknown constraint 'energy'; valid choices: ActionEnergy, .*JointLimit"),
        (dict(sensors={"Sonar": {}}), r"unknown sensor 'Sonar'; valid choices: Accelerometer, .*Velocimeter"),
        (dict(constraints={"ActionEnergy": {"wieght": 1.0}}),
         r"^constraint ActionEnergy \(PointGoal1\) takes no parameter\(s\) wieght; its parameters: weight, term$"),
        (dict(sensors={"Compass": {}}),
         r"^sensor Compass \(PointGoal1\) needs the parameter\(s\) target; its parameters: target, count, origin, mask$"),
        (dict(constraints={"action_energy": {"weight": -1.0}}),
         r"^weight must be >= 0, got -1.0 \(constraint ActionEnergy \(PointGoal1\)\)$"),
        (dict(constraints={"joint_limit": {"margin": 0.0}}), r"^margin must be in \(0, 1\], got 0.0"),
        (dict(constraints={"ActionEnergy": {"term": "a/b"}}), r"term must be a non-empty name without '/'"),
        (dict(constraints={"ActionEnergy": 0.5}), r"parameters of constraint ActionEnergy .* must be a dict"),
        (dict(constraints=["ActionEnergy"]), r"constraints must be a dict \{name: \{parameter: value\}\}"),
        (dict(constraints={"HazardContact": {"geoms": ("floor",)}}),
         r"adds the cost term 'contact', which PointGoal1 already has \(terms: cylinder_zones, contact\); pass term="),
        (dict(constraints={"ActionEnergy": {}, "action-energy": {"weight": 2.0}}), r"cost term 'action_energy'"),
    ],
)
def test_bad_components_are_rejected_before_compiling(no_compile, kwargs, message):
    with pytest.raises(ValueError, match=message):
        crax.make("PointGoal1", **kwargs)


def test_names_match_up_to_case_and_separators():
    assert compose.lookup("constraints", "action_energy") is ActionEnergy
    assert compose.lookup("constraints", "ACTION-ENERGY") is ActionEnergy
    assert compose.lookup("constraints", "JointLimit") is JointLimit
    with pytest.raises(ValueError, match="unknown constraint 'joint'"):
        compose.lookup("constraints", "joint")


def test_components_that_do_not_fit_the_compiled_task_name_why():
    # Point's joints (slide x, slide y, hinge z) have no ranges
    with pytest.raises(ValueError, match=r"^constraint JointLimit does not fit PointGoal1 \(body Point\): no limited "
                                         r"hinge or slide joint under 'agent/'"):
        crax.make("PointGoal1", constraints={"joint_limit": {}})
    # Velocity has no goal: the sensor would read a task entry the suite never writes
    with pytest.raises(ValueError, match=r"^sensor Distance reads task\['goal'\], which PointVelocity1 does not have "
                                         r"\(task entries: velocity\)$"):
        crax.make("PointVelocity1", sensors={"Distance": {"target": "goal"}})
    with pytest.raises(ValueError, match=r"sensor Velocimeter does not fit PointVelocity1 \(body Point\): .*agent/nose"):
        crax.make("PointVelocity1", sensors={"Velocimeter": {"site": "agent/nose"}})


class _Misreported(Sensor):
    """Declares 3 floats, returns 2."""

    name = "Misreported"
    size = 3

    def observe(self, ctx):
        return ctx.agent_xy


class _Marker(Sensor):
    """Adds a site to the scene (``build``) and reads its height (``bind``)."""

    name = "Marker"
    size = 1

    def build(self, spec: mujoco.MjSpec) -> None:
        spec.worldbody.add_site(name="marker", pos=[0.0, 0.0, 0.25])

    def bind(self, m: mujoco.MjModel) -> None:
        self.site_id = int(m.site("marker").id)

    def observe(self, ctx):
        return ctx.data.site_xpos[self.site_id, 2:3]


def test_taskenv_builds_binds_and_checks_added_components():
    from crax.bodies.point import Point

    with pytest.raises(ValueError, match=r"sensor Misreported returns shape \(2,\) on PointVelocity1; expected \(3,\)"):
        TaskEnv(crax.registry().suites["Velocity"](Point(), 1), sensors=[_Misreported()])
    env = TaskEnv(Goal(Point(), 1), sensors=[_Marker()], episode_length=5)
    marker = env.suite.sensors[-1]
    assert env.mj_model.site_pos[marker.site_id][2] == pytest.approx(0.25)
    assert env.observation_size == plain()[0].observation_size + 1


def test_building_envs_leaves_the_suite_and_components_alone():
    from crax.bodies.point import Point

    suite, term = crax.registry().suites["Velocity"](Point(), 1), ActionEnergy(weight=0.5)
    first = TaskEnv(suite, constraints=[term], episode_length=5)
    second = TaskEnv(suite, constraints=[term], episode_length=5)
    for env in (first, second):
        assert [c.term for c in env.suite.constraints] == ["velocity", "action_energy"]
    assert [c.term for c in suite.constraints] == ["velocity"]
    assert first.suite is not suite and first.suite.constraints[1] is not term


# ---- the command-line form ------------------------------------------------------------------------


def test_flags_parse_into_make_keyword_arguments():
    got = compose.parse_flags(
        ["action_energy:weight=0.05", "JointLimit:margin=0.2,weight=1e-2,term=limits"],
        ["Distance:target=goal,scale=2", "Pose"],
    )
    assert got == {
        "constraints": {"action_energy": {"weight": 0.05}, "JointLimit": {"margin": 0.2, "weight": 0.01, "term": "limits"}},
        "sensors": {"Distance": {"target": "goal", "scale": 2}, "Pose": {}},
    }
    assert compose.parse_flags() == {}
    values = compose.parse_spec("X:a=(1, 2),b='p,q',c=inf,d=true,e=none,f=agent/torso", "--sensor")[1]
    assert values == {"a": (1, 2), "b": "p,q", "c": math.inf, "d": True, "e": None, "f": "agent/torso"}


@pytest.mark.parametrize(
    ("constraints", "message"),
    [
        (["action_energy:weight"], r"'weight' is not param=value"),
        ([":weight=1"], r"no name"),
        (["a:w=1,w=2"], r"w is given twice"),
        (["a", "a:w=1"], r"--constraint a is given twice"),
    ],
)
def test_bad_flags_name_the_form(constraints, message):
    with pytest.raises(ValueError, match=message):
        compose.parse_flags(constraints)
