"""MuJoCo's own forward pass (C, on the host) for the tests' hand-placed states.

A hand-placement program that ran ``mjx.forward`` compiled for 5-18 s on this CPU, one per env
the tests place states in, to run once per state. Here the state written by the test (joint
positions and velocities, controls, mocap poses, time) is copied into an ``mujoco.MjData`` of the
env's own model, ``mujoco.mj_forward`` computes the rest and ``mjx.put_data`` brings it back as
the env's data, shaped as ``env.reset``'s so ``env.step`` continues from it. crax's observation and
cost terms then run, jitted, on that data (a program of well under a second to compile).

What this changes for a test: the kinematics, velocities, accelerations and contacts of the
placed state are MuJoCo's (float64, then rounded to float32) rather than MJX's. Observation and
cost code is crax's either way. MJX's own forward pass is checked by every test that steps an env.
Where the engines differ (box-box pairs; the Ant's foot against a button, where MuJoCo 4.0 solves
another acceleration than Safety-Gymnasium's MuJoCo 2.3.3 and MJX: see docs/safety_gymnasium.md),
a placed state reads MuJoCo 4.0's, and a test that needs MJX's keeps ``mjx.forward``.
"""

from __future__ import annotations

import jax
import mujoco
import numpy as np

from crax.core.mjx import mjx

WRITTEN = ("qpos", "qvel", "ctrl", "act", "mocap_pos", "mocap_quat", "qfrc_applied", "xfrc_applied")
"""The data fields a hand-placement writes; everything else is computed by ``mj_forward``."""


def forward(env, data: mjx.Data) -> mjx.Data:
    """``data`` (one env's, as written by a test) through MuJoCo's ``mj_forward`` on ``env.mj_model``,
    back as the env's data: the same pytree, shapes and dtypes as ``env.reset``'s."""
    m = env.mj_model
    d = mujoco.MjData(m)
    for name in WRITTEN:
        getattr(d, name)[:] = np.asarray(getattr(data, name), np.float64).reshape(getattr(d, name).shape)
    d.time = float(data.time)
    mujoco.mj_forward(m, d)
    out = mjx.put_data(m, d, impl="jax")
    like = env._data0
    if jax.tree.structure(out) != jax.tree.structure(like):
        raise AssertionError(f"{env.id}: mjx.put_data's data is not shaped as the env's")
    return jax.tree.map(lambda x, y: jax.numpy.asarray(x, y.dtype).reshape(y.shape), out, like)
