"""Spider: sizes (eval_shape, Velocity and Goal), morphology, reset noise, observation layout
after steps, standing and random-action stability, termination, action scaling, placement, and
its feet: the six named foot spheres are the only collidable agent geoms.

One env is compiled: ``compiled("SpiderVelocity1", velocity_threshold=1.0)`` (a threshold that
random actions cross), plus one vmapped ``mjx.forward`` for placement; see ``legged_checks``.
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

import crax
from tests.env import legged_checks as checks

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

ENV_ID = "SpiderVelocity1"
FEET = ("front_left", "front_right", "mid_left", "mid_right", "back_left", "back_right")
LEGS = ("front_left", "mid_left", "back_left", "front_right", "mid_right", "back_right")  # actuator order
ANGLES = {"front_left": 30, "mid_left": 90, "back_left": 150, "front_right": -30, "mid_right": -90, "back_right": -150}


@functools.cache
def spider() -> checks.Legged:
    return checks.Legged(ENV_ID, velocity_threshold=1.0)


@pytest.mark.slow
def test_sizes_by_eval_shape():
    checks.check_sizes(spider(), "Spider", obs=35, act=12)


def test_velocity_uses_the_measured_threshold():
    """Base τ = half the speed PPO reached (benchmarks/results/tau_Spider.json), × 1 / 0.75 / 0.5."""
    for level, factor in ((1, 1.0), (2, 0.75), (3, 0.5)):
        threshold = crax.make(f"SpiderVelocity{level}").suite.constraints[0].threshold[...]
        assert float(threshold) == pytest.approx(0.741 * factor)


def test_morphology_and_constants():
    t = spider()
    body, m = t.body, t.m
    assert (body.dt, body.healthy_z, body.healthy_reward, body.ctrl_cost) == (0.05, (0.2, 1.0), 1.0, 0.5)
    assert body.velocity_threshold == 0.741
    assert body.feet == FEET
    assert m.geom("agent/torso").size[0] == 0.25 and m.qpos0[2] == 0.75
    rad = np.pi / 180
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    for leg in LEGS:
        assert tuple(m.joint(f"agent/{leg}_hip").range) == pytest.approx((-30 * rad, 30 * rad))
        ankle = m.joint(f"agent/{leg}_ankle")
        assert tuple(ankle.range) == pytest.approx((30 * rad, 70 * rad))
        d.qpos[ankle.qposadr[0]] = 50 * rad
    mujoco.mj_kinematics(m, d)
    torso = d.xpos[body.torso_id]
    for leg, angle in ANGLES.items():
        # the foot lies along its leg's direction (60° apart) and bends down with a positive ankle angle
        foot = d.site(f"agent/{leg}").xpos - torso
        assert np.degrees(np.arctan2(foot[1], foot[0])) == pytest.approx(angle, abs=1e-3)
        assert foot[2] == pytest.approx(-0.56569 * np.sin(50 * rad), abs=1e-4)
        np.testing.assert_allclose(d.geom(f"agent/{leg}").xpos, d.site(f"agent/{leg}").xpos, atol=1e-6)


@pytest.mark.slow
def test_reset_noise():
    checks.check_reset_noise(spider())


@pytest.mark.slow
def test_observation_is_qpos_without_xy_then_qvel_after_steps():
    checks.check_observation_after_steps(spider(), obs=35)


def test_stands_with_zero_action():
    z = checks.check_stands_with_zero_action(spider())
    assert 0.3 < z[-1] < 0.7


def test_random_actions_stay_finite():
    checks.check_random_actions_stay_finite(spider())


def test_healthy_rule():
    checks.check_healthy_rule(spider())


def test_termination_on_torso_height():
    # the torso does not collide: upside down at z 0.1 it stays low through the step
    checks.check_termination(spider(), [("low", 0.1, 1.0), ("high", 1.2, 1.0), ("standing", None, 0.0)])


def test_action_scaling_and_gears():
    checks.check_action_scaling(spider(), [f"{leg}_{j}" for leg in LEGS for j in ("hip", "ankle")])


@pytest.mark.slow
def test_place_sets_xy_and_yaw():
    checks.check_place(spider(), front=("front_left", "front_right"))


def test_feet_are_the_only_collidable_geoms():
    t = spider()
    m = t.m
    assert sorted(t.agent_geoms()) == sorted(FEET)
    for foot in FEET:
        g = m.geom(f"agent/{foot}")
        assert g.type == mujoco.mjtGeom.mjGEOM_SPHERE
        assert m.site(f"agent/{foot}").id >= 0  # a site of the same name at the foot
    # Velocity: one sphere-floor contact per foot, nothing else (6 pairs, 6 contact slots)
    want = sorted(("agent/" + f, "floor") for f in FEET)
    assert sorted(checks.candidate_pairs(m)) == want
    # Goal level 1 adds the four walls: 6 feet x (floor + 4 walls) = 30 pairs and slots
    goal = crax.make("SpiderGoal1")
    walls = [f"wall_{s}" for s in ("east", "west", "north", "south")]
    assert sorted(checks.candidate_pairs(goal.mj_model)) == sorted(
        tuple(sorted(("agent/" + f, w))) for f in FEET for w in ["floor", *walls]
    )
    assert goal._data0._impl.contact.geom.shape[0] == 30
    # after settling with zero action all six feet stand on the floor
    s = t.step(t.reset(), qpos=m.qpos0, qvel=np.zeros(m.nv))
    for _ in range(40):
        s = t.step(s)
    pairs = checks.contact_pairs(m, s.data)
    assert sorted(pairs) == want
    touching = {pairs[i][0] for i in range(len(pairs)) if s.data._impl.contact.dist[i] < 0}
    assert touching == {"agent/" + f for f in FEET}
