"""The Safety-Gymnasium agents' own models in crax, checked in plain MuJoCo (nothing compiled): their
readings against MuJoCo's sensor stage, the Ant's self-contacts and reset draw, the contacts the
Point's arrow and the Car's wheels take part in. The Doggo's are in tests/env/test_safety_doggo.py."""

from __future__ import annotations

import functools

import jax
import mujoco
import numpy as np
import pytest

import crax
from crax.core.scene import Category
from tests.env.body_checks import Draw, agent_geoms, assert_readings_are_the_sensor_stage, unrelated_pairs
from tests.env.legged_checks import candidate_pairs


@functools.cache
def env(env_id: str):
    return crax.make(env_id)  # built, not compiled


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _ant_state(rng: np.random.Generator, m: mujoco.MjModel, k: int):
    """In the air, tilted (every other state upright, turned), on the floor, pressed into it, spinning, with controls."""
    lo, hi = m.jnt_range[1:9].T
    quat = rng.normal(size=4) if k % 2 else np.array([1.0, 0.0, 0.0, rng.normal()])
    return ([*rng.uniform(-1, 1, 2), rng.uniform(0.05, 0.3), *_unit(quat), *rng.uniform(lo, hi)],
            rng.normal(size=14), rng.uniform(-1, 1, 8))


def _car_state(rng: np.random.Generator, m: mujoco.MjModel, k: int):
    quat, ball = rng.normal(size=4), rng.normal(size=4)
    return ([*rng.uniform(-1, 1, 2), rng.uniform(0.05, 0.3), *_unit(quat), *rng.uniform(-3, 3, 2), *_unit(ball)],
            rng.normal(size=11), rng.uniform(-1, 1, 2))


def _racecar_state(rng: np.random.Generator, m: mujoco.MjModel, k: int):
    quat, steer = rng.normal(size=4), rng.uniform(-0.7, 0.7)
    return ([*rng.uniform(-1, 1, 2), rng.uniform(0.05, 0.3), *_unit(quat), steer, rng.uniform(-3, 3), steer,
             *rng.uniform(-3, 3, 2)], rng.normal(size=11), rng.uniform(-1, 1, 2) * [20.0, 0.785])


def _ant_reading(key: str, size: int, r: np.ndarray) -> np.ndarray:
    """The height of ``agent_pos``, (sin, cos) of each hinge angle."""
    return r[2:] if key == "agent_pos" else np.array([np.sin(r[0]), np.cos(r[0])]) if size == 2 else r


def _car_reading(key: str, size: int, r: np.ndarray) -> np.ndarray:
    """``ballquat_rear`` as ``mju_quat2Mat`` of its reading."""
    if key != "ballquat_rear":
        return r
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, r)
    return mat


SENSED: list = [
    pytest.param("SafetyAntGoal0-v0", _ant_state, _ant_reading, id="Ant"),
    pytest.param("SafetyCarGoal0-v0", _car_state, _car_reading, id="Car", marks=pytest.mark.slow),
    pytest.param("SafetyRacecarGoal1-v0", _racecar_state, lambda key, size, r: r, id="Racecar", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("env_id", "draw", "reading"), SENSED)
def test_the_observation_is_what_mujocos_sensors_read(env_id, draw: Draw, reading):
    """The body's readings computed from the state (40 of the Ant, 24 of the Car, 12 of the Racecar)
    equal MuJoCo's own sensor stage on random states. Nothing is compiled (the observation runs op by op)."""
    assert_readings_are_the_sensor_stage(env(env_id), draw, reading)


def test_the_ants_own_geoms_never_meet():
    """crax's Ant does not collide with itself; Safety-Gymnasium's could, between geoms of bodies
    that are not parent and child. Over its joint ranges (and their ends) those pairs stay more than
    2 cm apart, so no such contact ever arises there either."""
    ant = env("SafetyAntGoal0-v0")
    m = ant.mj_model
    d = mujoco.MjData(m)
    pairs = unrelated_pairs(m, agent_geoms(m))
    assert len(pairs) == 44
    lo, hi = m.jnt_range[1:9].T
    rng = np.random.default_rng(1)
    corners = np.where((np.arange(256)[:, None] >> np.arange(8)) & 1, hi, lo)
    nearest = np.inf
    for hinges in np.concatenate([corners, rng.uniform(lo, hi, (744, 8))]):
        d.qpos[slice(*ant.body.qpos_adr)] = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, *hinges]
        mujoco.mj_kinematics(m, d)
        nearest = min(nearest, min(mujoco.mj_geomDistance(m, d, a, b, 0.1, None) for a, b in pairs))
    assert nearest > 0.02


def test_resets_draw_the_ants_pose():
    """The reset's joint state (``Ant.reset``): root 0.18 m up and level, hips U(±0.1), ankles
    ±(π/2 + U(±0.1)), at rest; drawn op by op (nothing compiled)."""
    body = env("SafetyAntGoal0-v0").body
    draws = [body.initial_state(k) for k in jax.random.split(jax.random.key(0), 64)]
    qpos, qvel = np.stack([np.asarray(q) for q, _ in draws]), np.stack([np.asarray(v) for _, v in draws])
    np.testing.assert_allclose(qpos[:, :7], np.tile([0.0, 0.0, 0.18, 1.0, 0.0, 0.0, 0.0], (64, 1)), atol=1e-7)
    offset = qpos[:, 7:] - np.asarray(body.reset_pose)
    assert np.all(np.abs(offset) <= 0.1) and np.all(np.ptp(offset, axis=0) > 0.15)  # uniform in ±0.1, each drawn
    assert np.all(np.sign(qpos[:, 8::2]) == [1, -1, -1, 1])  # ankles 1 and 4 positive, 2 and 3 negative
    assert not np.any(qvel)


def test_the_arrow_box_collides_with_everything_but_the_floor():
    """The Point's height is fixed (the torso slides in x and y and turns about z; its arrow box is
    0.05 m clear of the floor), so the floor pair is left out and MJX computes no contact slot for
    it; the vase and the agent's sphere on the floor keep theirs."""
    m = env("SafetyPointGoal1-v0").mj_model
    torso = m.body("agent/torso").id
    joints = [(int(m.jnt_type[j]), tuple(m.jnt_axis[j])) for j in range(m.njnt) if m.jnt_bodyid[j] == torso]
    slide, hinge = mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE
    assert joints == [(slide, (1.0, 0.0, 0.0)), (slide, (0.0, 1.0, 0.0)), (hinge, (0.0, 0.0, 1.0))]
    arrow = m.geom("agent/pointarrow").id
    mujoco_data = mujoco.MjData(m)
    mujoco.mj_forward(m, mujoco_data)
    assert mujoco_data.geom_xpos[arrow][2] - m.geom_size[arrow][2] == pytest.approx(0.05)
    pairs = candidate_pairs(m)
    assert ("agent/pointarrow", "floor") not in pairs
    assert {("agent/pointarrow", "vases/0"), ("agent/agent", "floor"), ("agent/agent", "vases/0")} <= set(pairs)


def test_the_cars_wheels_touch_the_floor_only():
    """Boxes around the wheels on the chassis take their object contacts; they are massless."""
    m = env("SafetyCarGoal0-v0").mj_model
    wheel = (int(Category.AGENT_WHEEL), int(Category.FLOOR))
    assert all((m.geom_contype[m.geom(f"agent/{w}").id], m.geom_conaffinity[m.geom(f"agent/{w}").id]) == wheel
               for w in ("left", "right"))
    assert m.geom("agent/left_proxy").size.tolist() == pytest.approx([0.025, 0.05, 0.05])
    assert m.body("agent/torso").mass[0] == pytest.approx(0.0239)
