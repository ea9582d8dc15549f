"""``physics="warp"`` on Warp's CPU device: MJX's Warp implementation against its JAX one.

Skipped unless NVIDIA Warp is importable (``pip install 'crax[warp]'``). Measured in a scratch venv
(warp-lang 1.19.0, mujoco-mjx 3.17.0, jax 0.10.2, CPU): over 12 batched steps of PointCircle1 with
auto-resets, qpos differed from the JAX implementation's by at most 6e-8, observations by 1e-6 (of
entries up to 9.81) and rewards by 6e-9, and the same envs finished on the same steps. The first run
compiles Warp's kernels for the CPU (minutes; cached in ~/.cache/warp afterwards).
"""

from __future__ import annotations

import jax
import mujoco
import numpy as np
import pytest

import crax
from crax.core import physics
from crax.core.env import wrap_for_training

pytest.importorskip("warp", reason="NVIDIA Warp (pip install 'crax[warp]') is not installed")

ENV_ID = "PointCircle1"
N, T = 4, 12
TOLERANCE = dict(rtol=1e-5, atol=1e-5)
"""Warp's float32 kernels sum in another order than XLA's: a few ulp per step, far below this."""


def test_point_circle_steps_as_on_jax():
    envs = {p: wrap_for_training(crax.make(ENV_ID, physics=p, episode_length=5), N) for p in ("jax", "warp")}
    assert envs["warp"].unwrapped.physics == "warp"
    actions = jax.random.uniform(jax.random.key(3), (T, N, envs["jax"].action_size), minval=-1, maxval=1)

    def rollout(env):
        def body(s, a):
            s = env.step(s, a)
            return s, (s.data.physics.qpos, s.obs, s.reward, s.cost, s.done)

        return jax.lax.scan(body, env.reset(jax.random.key(0)), actions)

    last, warp = jax.jit(lambda: rollout(envs["warp"]))()
    _, ref = jax.jit(lambda: rollout(envs["jax"]))()
    np.testing.assert_array_equal(warp[4], ref[4])
    assert float(ref[4].sum()) >= N  # every env finished an episode (length 5) and was reset
    for got, want in zip(warp[:4], ref[:4], strict=True):
        np.testing.assert_allclose(got, want, **TOLERANCE)
    # the contact buffer the batch shares holds the contacts of all N envs, and has no env axis
    per_world = int(physics.make_data(envs["warp"].unwrapped.mj_model, None, "warp")._impl.naconmax)  # pyright: ignore[reportArgumentType, reportAttributeAccessIssue]
    assert last.data.physics._impl.contact__pos.shape == (N * per_world, 3)
    assert last.data.physics.qpos.shape[0] == N


def test_a_model_feature_warp_lacks_names_the_feature():
    m = mujoco.MjModel.from_xml_string('<mujoco><option solver="PGS"/><worldbody><body><freejoint/>'
                                       '<geom size=".1"/></body></worldbody></mujoco>')
    with pytest.raises(ValueError, match=r"^Ball1 cannot run on physics='warp': .*mjSOL_PGS is unsupported\."):
        physics.put_model(m, "warp", "Ball1")


def test_a_task_that_reads_the_jax_contact_list_is_refused_with_the_env():
    """Button reads which button the agent touches from the JAX implementation's per-env contact
    list; Warp keeps one contact buffer for the whole batch."""
    with pytest.raises(ValueError, match=r"PointButton1: .*contact list.*physics='warp'.*use physics='jax'"):
        crax.make("PointButton1", physics="warp")


def test_only_the_solver_budget_warnings_are_off():
    """crax's small solver budgets end most solves at their limit (decision 3); MuJoCo Warp would print
    a line for each. Its warnings of a full contact or constraint buffer stay on."""
    from mujoco.mjx.third_party.mujoco_warp import OverflowType

    warn = crax.make("AntVelocity1", physics="warp").mjx_model.opt._impl.warn_overflow
    assert not warn & (OverflowType.ITERATIONS | OverflowType.LS_ITERATIONS)
    assert warn & OverflowType.NARROWPHASE and warn & OverflowType.BROADPHASE and warn & OverflowType.NEFC
