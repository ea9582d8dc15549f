"""Ant: sizes (eval_shape, Velocity and Goal), morphology constants, reset noise, observation
layout after steps, standing and random-action stability, termination, action scaling,
placement and its collision geoms.

One env is compiled: ``compiled("AntVelocity1")`` (its ``reset`` and ``step``), plus one
vmapped ``mjx.forward`` for placement; see ``legged_checks``.
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from tests.env import legged_checks as checks

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

ENV_ID = "AntVelocity1"
JOINTS = [f"{part}_{i}" for i in range(1, 5) for part in ("hip", "ankle")]
SHINS = ("front_left", "back_left", "back_right", "front_right")  # legs 1..4
ANKLE_SIGNS = (1, -1, -1, 1)  # Gymnasium's: legs 1 and 4 bend down for positive angles, 2 and 3 for negative


@functools.cache
def ant() -> checks.Legged:
    return checks.Legged(ENV_ID)


@pytest.mark.slow
def test_sizes_by_eval_shape():
    checks.check_sizes(ant(), "Ant", obs=27, act=8)


def test_morphology_and_constants():
    t = ant()
    body, m = t.body, t.m
    assert (body.dt, body.healthy_z, body.healthy_reward, body.ctrl_cost) == (0.05, (0.2, 1.0), 1.0, 0.5)
    assert body.velocity_threshold == 2.62
    assert m.opt.timestep == 0.01 and body.frame_skip == 5
    torso = m.geom("agent/torso")
    assert torso.type == mujoco.mjtGeom.mjGEOM_SPHERE and torso.size[0] == 0.25
    assert m.qpos0[2] == 0.75
    # hips ±30° about the torso's z axis; ankles 30°..70° in the leg's sign, bending the shin down
    rad = np.pi / 180
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    for i, sign in enumerate(ANKLE_SIGNS, start=1):
        hip, ankle = m.joint(f"agent/hip_{i}"), m.joint(f"agent/ankle_{i}")
        assert tuple(hip.range) == pytest.approx((-30 * rad, 30 * rad))
        assert tuple(ankle.range) == pytest.approx(sorted((sign * 30 * rad, sign * 70 * rad)))
        d.qpos[ankle.qposadr[0]] = sign * 50 * rad
    mujoco.mj_kinematics(m, d)
    for shin in SHINS:  # the shin's tip: 0.566 m at 50° below the knee at torso height
        assert d.site(f"agent/{shin}").xpos[2] == pytest.approx(0.75 - 0.56569 * np.sin(50 * rad), abs=1e-4)
    assert body.feet == SHINS


def test_reset_noise():
    checks.check_reset_noise(ant())


def test_observation_is_qpos_without_xy_then_qvel_after_steps():
    checks.check_observation_after_steps(ant(), obs=27)


def test_stands_with_zero_action():
    z = checks.check_stands_with_zero_action(ant())
    assert 0.3 < z[-1] < 0.7


def test_random_actions_stay_finite():
    checks.check_random_actions_stay_finite(ant())


def test_healthy_rule():
    checks.check_healthy_rule(ant())


def test_termination_on_torso_height():
    # The Ant's torso sphere (r 0.25) collides, so a torso put at z 0.1 is pushed back out of the
    # floor within the step and the episode goes on: only the height after the step counts.
    # (Its lower bound is reached only by sinking into the floor; the Spider test checks done=1 low.)
    checks.check_termination(ant(), [("low, pushed out", 0.1, 0.0), ("high", 1.2, 1.0), ("standing", None, 0.0)])


def test_action_scaling_and_gears():
    checks.check_action_scaling(ant(), JOINTS)


@pytest.mark.slow
def test_place_sets_xy_and_yaw():
    checks.check_place(ant(), front=("front_left", "front_right"))


def test_only_torso_and_shins_collide():
    t = ant()
    assert sorted(t.agent_geoms()) == sorted(["torso", *SHINS])
    want = sorted(("agent/" + g, "floor") for g in ["torso", *SHINS])
    assert sorted(checks.candidate_pairs(t.m)) == want
    # after settling with zero action the four shins touch the floor, the torso does not
    s = t.step(t.reset(), qpos=t.m.qpos0, qvel=np.zeros(t.m.nv))
    for _ in range(40):
        s = t.step(s)
    # sphere-plane is one contact point, capsule-plane two: 5 pairs, 9 contact slots in Velocity
    pairs = checks.contact_pairs(t.m, s.data)
    assert sorted(set(pairs)) == want and len(pairs) == 9
    touching = {pairs[i][0] for i in range(len(pairs)) if s.data._impl.contact.dist[i] < 0}
    assert touching == {"agent/" + f for f in SHINS}
