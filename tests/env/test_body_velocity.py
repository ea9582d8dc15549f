"""`Body.velocity` (the context's ``agent_velocity``) against MuJoCo's own object velocity.

For every registered body, a random joint velocity is set on its scene model; MuJoCo's
``mj_objectVelocity`` of the torso frame (``mjOBJ_XBODY``, world frame, after ``mj_forward``) must equal the body's
``velocity`` read from the same MJX data. No jit: each body's call runs op by op.
"""

from __future__ import annotations

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.core.mjx import mjx

ENVS = {"Point": "PointVelocity1", "Ant": "AntVelocity1", "Hopper": "HopperVelocity1", "Humanoid": "HumanoidVelocity1",
        "HalfCheetah": "HalfCheetahVelocity1", "Reacher": "ReacherReach1"}


@pytest.mark.parametrize("body", sorted(ENVS))
@pytest.mark.slow
def test_velocity_is_the_torso_world_velocity(body):
    untested_tau = "Velocity" in ENVS[body] and crax.registry().bodies[body].velocity_threshold is None
    env = crax.make(ENVS[body], **({"velocity_threshold": 1.0} if untested_tau else {}))
    m = env.mj_model
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    d.qpos[:] = m.qpos0
    d.qvel[:] = rng.uniform(-1.0, 1.0, m.nv)
    mujoco.mj_forward(m, d)
    want = np.zeros(6)
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, env.body.torso_id, want, 0)
    data = mjx.put_data(m, d, impl="jax")
    got = np.asarray(env.body.velocity(env.mjx_model, data))
    np.testing.assert_allclose(got, want[3:], atol=1e-5)
    ctx = env.suite.context(env.mjx_model, data, {})
    np.testing.assert_allclose(np.asarray(ctx.agent_velocity), want[3:], atol=1e-5)
    assert float(jnp.linalg.norm(ctx.agent_velocity)) > 0.0 or body == "Reacher"
