"""Checks shared by the Walker2d and Hopper tests (planar bodies with a height and pitch health rule).

Every check drives one compiled env (``compiled(env_id)``: its jitted ``reset`` and ``step``) with
hand-edited states: a reset state whose ``qpos``/``qvel`` are replaced, then one ``env.step``
(which recomputes everything derived from them). Root coordinates: qpos = (rootx, rootz, rooty,
joints...), where rootz is the torso height and rooty the pitch.
"""

from __future__ import annotations

import jax
import mujoco
import numpy as np
import pytest

import crax
from crax.bodies.base import NAVIGATION
from tests.env.conftest import compiled, host, step_from

FOLDED = -2.61799
"""Thigh and knee at their -150° limits: each leg folds up so its foot is above the hip, which
lets a test put the torso low without pushing a foot into the floor."""


def reset(env_id: str, seed: int = 0):
    return host(compiled(env_id).reset(jax.random.key(seed)))


def step(env_id: str, state, *, qpos=None, qvel=None, action=None):
    """One ``env.step`` from ``state`` with ``qpos``/``qvel`` replaced (numpy in, numpy out)."""
    return step_from(compiled(env_id), state, qpos=qpos, qvel=qvel, action=action)


def torso_height(env_id: str, qpos) -> float:
    """The torso's world z for ``qpos``, by MuJoCo C forward kinematics."""
    env = compiled(env_id).env
    m = env.mj_model
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_kinematics(m, d)
    return float(d.xpos[env.body.torso_id, 2])


def expected_obs(data) -> np.ndarray:
    """qpos without root x, then qvel clipped to ±10."""
    return np.concatenate([data.qpos[1:], np.clip(data.qvel, -10.0, 10.0)])


def folded_pose(env_id: str, z: float, pitch: float) -> np.ndarray:
    """qpos with the torso at height ``z`` and ``pitch``, every leg folded up (feet above the hips)."""
    env = compiled(env_id).env
    m = env.mj_model
    q = np.asarray(env.mj_model.qpos0, np.float32).copy()
    q[1], q[2] = z, pitch
    for name in ("thigh", "leg", "thigh_left", "leg_left"):
        if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "agent/" + name) >= 0:
            q[m.joint("agent/" + name).qposadr[0]] = FOLDED
    return q


def check_termination(env_id: str, cases) -> None:
    """``cases``: (label, z, pitch, done). Each pose is stepped once from rest, with the legs folded
    so nothing touches the floor; the stepped state must still be on the same side of every bound
    (checked against the body's own bounds) and ``done`` / the healthy reward must follow."""
    env = compiled(env_id).env
    body, m = env.body, env.mj_model
    s = reset(env_id)
    lo, hi = body.healthy_z
    for label, z, pitch, done in cases:
        out = step(env_id, s, qpos=folded_pose(env_id, z, pitch), qvel=np.zeros(m.nv))
        zz, pp = out.data.qpos[1], out.data.qpos[2]
        assert np.all(out.data._impl.contact.dist > 0), label  # in the air: nothing touches the floor
        still = (lo <= zz <= hi) and abs(pp) < body.healthy_pitch
        assert still == (not done), (label, zz, pp)
        assert torso_height(env_id, out.data.qpos) == pytest.approx(zz, abs=1e-6)  # rootz is the torso height
        assert out.done == float(done), label
        assert out.truncation == 0.0, label
        assert out.metrics["reward/healthy"] == (0.0 if done else 1.0), label


def check_navigation_suites_reject(body: str) -> None:
    """``{body}Goal1`` is refused with a ValueError that names the navigation bodies."""
    nav = sorted(b for b, cls in crax.registry().bodies.items() if NAVIGATION in cls.kinds)
    assert "Point" in nav
    try:
        crax.make(f"{body}Goal1")
    except ValueError as e:
        msg = str(e)
    else:
        raise AssertionError(f"{body}Goal1 was accepted")
    listed = msg.split("bodies for Goal:")[1]
    assert all(b in listed for b in nav), msg
    assert body not in listed, msg
