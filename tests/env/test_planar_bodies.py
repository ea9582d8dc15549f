"""Hopper and Walker2d: sizes, morphology, observation layout and velocity clip, termination on each
health bound, action scaling and gears, and standing still at reset.

Every test runs once per body (``Planar`` below holds what differs between them). One env per body
is compiled (``compiled("HopperVelocity1")``, ``compiled("Walker2dVelocity1")``: their ``reset`` and
``step``); every state is a reset state with ``qpos``/``qvel`` edited by hand and stepped (see
``planar_checks``).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.core.scene import Category
from tests.env.conftest import compiled
from tests.env.planar_checks import (
    check_navigation_suites_reject,
    check_termination,
    expected_obs,
    reset,
    step,
    torso_height,
)

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

RANGES_DEG = {"thigh": (-150, 0), "leg": (-150, 0), "foot": (-45, 45)}
"""Joint ranges of both bodies (Walker2d's ``*_left`` joints match their right-hand twins)."""


@dataclasses.dataclass(frozen=True)
class Planar:
    body: str
    joints: tuple[str, ...]
    obs_size: int
    gear: float
    colliding: tuple[str, ...]
    """The agent's colliding geoms (only the feet)."""
    termination: tuple[tuple[str, float, float, bool], ...]
    """(label, torso z, pitch, done) for ``check_termination``."""
    action: tuple[float, ...]
    """An action whose last two entries lie outside ±1 (clipped)."""

    @property
    def env_id(self) -> str:
        return f"{self.body}Velocity1"

    @property
    def nu(self) -> int:
        return len(self.joints)

    @property
    def nv(self) -> int:
        return 3 + len(self.joints)  # rootx, rootz, rooty, then one dof per joint

    @property
    def qvel_obs(self) -> int:
        """Where the clipped qvel starts in the observation (after qpos without root x)."""
        return self.obs_size - self.nv


HOPPER = Planar(
    body="Hopper",
    joints=("thigh", "leg", "foot"),
    obs_size=11,
    gear=200.0,
    colliding=("agent/foot",),
    termination=(
        ("healthy", 1.25, 0.0, False),
        ("healthy, near the bounds", 0.75, 0.15, False),
        ("healthy, high (no upper bound), pitched back", 3.0, -0.15, False),
        ("too low", 0.65, 0.0, True),
        ("pitched forward", 1.3, 0.25, True),
        ("pitched back", 1.3, -0.25, True),
    ),
    action=(0.5, 1.7, -3.0),
)

WALKER2D = Planar(
    body="Walker2d",
    joints=("thigh", "leg", "foot", "thigh_left", "leg_left", "foot_left"),
    obs_size=17,
    gear=100.0,
    colliding=("agent/foot", "agent/foot_left"),
    termination=(
        ("healthy", 1.25, 0.0, False),
        ("healthy, near every bound", 0.85, 0.95, False),
        ("healthy, high, pitched back", 1.95, -0.95, False),
        ("too low", 0.7, 0.0, True),
        ("too high", 2.1, 0.0, True),
        ("pitched forward", 1.25, 1.1, True),
        ("pitched back", 1.25, -1.1, True),
    ),
    action=(0.5, -0.25, 1.0, -1.0, 1.7, -3.0),
)


@pytest.fixture(params=[HOPPER, WALKER2D], ids=lambda p: p.body)
def planar(request) -> Planar:
    return request.param


@pytest.mark.slow
def test_sizes_by_eval_shape(planar):
    e = compiled(planar.env_id).env
    state = e.state_shapes
    assert state.obs.shape == (planar.obs_size,)
    assert jax.eval_shape(e.step, state, jnp.zeros(planar.nu)).obs.shape == (planar.obs_size,)
    assert e.action_size == planar.nu and e.observation_size == planar.obs_size
    assert e.dt == pytest.approx(0.008) and e.mj_model.opt.timestep == pytest.approx(0.002)


def test_morphology(planar):
    m = compiled(planar.env_id).env.mj_model
    names = [m.joint(j).name.removeprefix("agent/") for j in range(m.njnt)]
    assert names == ["rootx", "rootz", "rooty", *planar.joints]
    assert list(m.jnt_type[:3]) == [2, 2, 3]  # slide, slide, hinge
    for j in planar.joints:
        lo, hi = np.degrees(m.joint("agent/" + j).range)
        assert (lo, hi) == pytest.approx(RANGES_DEG[j.removesuffix("_left")], abs=0.01), j
    np.testing.assert_array_equal(m.actuator_gear[:, 0], planar.gear)
    np.testing.assert_array_equal(m.actuator_ctrlrange, [[-1.0, 1.0]] * planar.nu)
    assert [m.joint(int(t)).name.removeprefix("agent/") for t in m.actuator_trnid[:, 0]] == list(planar.joints)
    # only the feet collide, and as agent geoms (floor, hazards, walls; never each other)
    colliding = [m.geom(g).name for g in range(m.ngeom) if m.geom_contype[g] and m.geom(g).name.startswith("agent/")]
    assert colliding == list(planar.colliding)
    assert all(m.geom(g).contype == Category.AGENT for g in colliding)
    assert m.qpos0[1] == pytest.approx(1.25)  # rootz ref: the coordinate is the torso height


@pytest.mark.slow
def test_reset_noise_and_standing_still(planar):
    e = compiled(planar.env_id).env
    q0 = np.asarray(e.mj_model.qpos0)
    s = reset(planar.env_id, seed=1)
    assert np.all(np.abs(s.data.qpos - q0) <= 0.005 + 1e-6) and np.std(s.data.qpos - q0) > 1e-3
    assert np.all(np.abs(s.data.qvel) <= 0.005 + 1e-6) and np.std(s.data.qvel) > 1e-3
    np.testing.assert_allclose(s.obs, expected_obs(s.data), atol=1e-6)
    for _ in range(25):  # 0.2 s with zero action: lands on its feet and stays upright
        s = step(planar.env_id, s)
        assert s.done == 0.0 and s.metrics["reward/healthy"] == 1.0
    assert 1.1 < s.data.qpos[1] < 1.3 and abs(s.data.qpos[2]) < 0.1


def test_observation_layout_and_finite_under_random_actions(planar):
    s = reset(planar.env_id, seed=2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = rng.uniform(-1, 1, planar.nu).astype(np.float32)
        s = step(planar.env_id, s, action=a)
        assert np.all(np.isfinite(s.data.qpos)) and np.all(np.isfinite(s.data.qvel))
        np.testing.assert_allclose(s.obs, expected_obs(s.data), atol=1e-6)
        # obs[0] is the torso height
        assert s.obs[0] == pytest.approx(torso_height(planar.env_id, s.data.qpos), abs=1e-5)
        assert s.metrics["reward/ctrl"] == pytest.approx(-0.001 * np.sum(a**2), rel=1e-5)


def test_velocity_clip(planar):
    e = compiled(planar.env_id).env
    s = reset(planar.env_id)
    i = planar.qvel_obs
    assert i == {"Hopper": 5, "Walker2d": 8}[planar.body]
    qvel = np.zeros(planar.nv, np.float32)
    qvel[0], qvel[1], qvel[3] = -30.0, 30.0, 30.0  # backwards, upwards (off the floor), thigh swing
    out = step(planar.env_id, s, qvel=qvel)
    v = out.data.qvel
    assert v[0] < -10.0 and v[1] > 10.0  # still beyond the clip after the step
    np.testing.assert_allclose(out.obs[i:], np.clip(v, -10, 10), atol=1e-6)
    assert out.obs[i] == -10.0 and out.obs[i + 1] == 10.0
    # and on observe directly, with hand-built velocities
    data = jax.tree.map(jnp.asarray, s.data).replace(qvel=jnp.linspace(-20.0, 20.0, planar.nv))
    np.testing.assert_allclose(e.body.observe(data)[i:], np.clip(np.linspace(-20, 20, planar.nv), -10, 10),
                               atol=1e-6)


def test_termination(planar):
    check_termination(planar.env_id, list(planar.termination))


def test_action_scaling_and_gears(planar):
    e = compiled(planar.env_id).env
    m = e.mj_model
    s = reset(planar.env_id)
    action = np.array(planar.action, np.float32)  # the last two are clipped
    out = step(planar.env_id, s, action=action)
    ctrl = np.clip(action, -1, 1)  # ctrlrange ±1
    np.testing.assert_allclose(out.data.ctrl, ctrl, rtol=1e-6)
    np.testing.assert_allclose(e.body.ctrl(jnp.asarray(action)), ctrl, rtol=1e-6)
    dofs = [int(m.jnt_dofadr[int(t)]) for t in m.actuator_trnid[:, 0]]
    np.testing.assert_allclose(out.data.qfrc_actuator[dofs], planar.gear * ctrl, rtol=1e-5)
    np.testing.assert_array_equal(out.data.qfrc_actuator[:3], 0.0)  # no motor on the root


def test_goal_suites_reject_the_body(planar):
    check_navigation_suites_reject(planar.body)
