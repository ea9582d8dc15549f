"""Checks shared by the Ant and Spider tests (legged free-joint bodies: qpos = x, y, z, quat, joints).

Every check drives one compiled Velocity env (``compiled(env_id, **overrides)``: its jitted
``reset`` and ``step``), with states from ``env.reset`` whose ``qpos``/``qvel`` are replaced by
hand before one ``env.step`` (which recomputes everything derived from them). Placement is read
back through MuJoCo's forward pass (:mod:`tests.env.c_forward`). Sizes of the Goal envs come from
``jax.eval_shape`` (nothing compiled).
"""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from tests import trees
from tests.env import c_forward
from tests.env.conftest import compiled, host, step_from

GOAL_SENSORS = 50
"""Goal lidar 16 + hazard lidar 16 + goal compass 2 + 8 hazard compasses 16."""

UPSIDE_DOWN = np.array([0.0, 1.0, 0.0, 0.0], np.float32)
"""Root quaternion of a torso turned by π about x: the legs point up, away from the floor."""


class Legged:
    """One compiled Velocity env of a legged body and the helpers the checks share."""

    def __init__(self, env_id: str, **overrides):
        self.c = compiled(env_id, **overrides)
        self.env = self.c.env
        self.body = self.env.body
        self.m = self.env.mj_model

    def reset(self, seed: int = 0):
        return host(self.c.reset(jax.random.key(seed)))

    def step(self, state, *, qpos=None, qvel=None, action=None):
        """One ``env.step`` from ``state`` with ``qpos``/``qvel`` replaced (numpy in, numpy out)."""
        return step_from(self.c, state, qpos=qpos, qvel=qvel, action=action)

    def rollout(self, actions, seed: int = 0):
        """States after each of ``actions`` (one jitted ``step`` per action), starting from a reset."""
        state = self.c.reset(jax.random.key(seed))
        out = []
        for a in actions:
            state = self.c.step(state, jnp.asarray(a, jnp.float32))
            out.append(host(state))
        return out

    def forward(self, qpos: np.ndarray):
        """MuJoCo's forward pass (:mod:`tests.env.c_forward`) of the env's model on a batch of agent
        qpos, stacked as one batched data."""
        env = self.env
        rows = []
        for q in np.asarray(qpos):
            data = env._data0.replace(qpos=env._data0.qpos.at[slice(*env.body.qpos_adr)].set(q))
            rows.append(c_forward.forward(env, data))
        return trees.stack(rows)

    def agent_geoms(self) -> list[str]:
        """Names of the agent's collidable geoms (without the ``agent/`` prefix)."""
        m = self.m
        return [
            m.geom(g).name.removeprefix("agent/")
            for g in range(m.ngeom)
            if m.geom(g).name.startswith("agent/") and (m.geom_contype[g] or m.geom_conaffinity[g])
        ]


def contact_pairs(m: mujoco.MjModel, data) -> list[tuple[str, str]]:
    """The geom pairs of ``data``'s contact slots (one row per contact point; MJX evaluates every
    slot at every substep). ``data`` must have been through collision (a stepped state)."""
    return [tuple(sorted((m.geom(int(a)).name, m.geom(int(b)).name))) for a, b in np.asarray(data._impl.contact.geom)]


def candidate_pairs(m: mujoco.MjModel) -> list[tuple[str, str]]:
    """Geom pairs on different bodies whose contype/conaffinity bits match (MuJoCo's rule; plane
    pairs excluded): the pairs MJX gives contact slots to, found from the compiled model alone."""
    plane = mujoco.mjtGeom.mjGEOM_PLANE
    out = []
    for a in range(m.ngeom):
        for b in range(a + 1, m.ngeom):
            if m.geom_bodyid[a] == m.geom_bodyid[b] or m.geom_type[a] == m.geom_type[b] == plane:
                continue
            if (m.geom_contype[a] & m.geom_conaffinity[b]) | (m.geom_contype[b] & m.geom_conaffinity[a]):
                out.append(tuple(sorted((m.geom(a).name, m.geom(b).name))))
    return out


def wrap(angle):
    """Angles wrapped into (-π, π]."""
    return np.angle(np.exp(1j * np.asarray(angle, np.float64)))


def check_sizes(t: Legged, body: str, obs: int, act: int) -> None:
    env = t.env
    assert env.action_size == act
    assert env.observation_size == obs  # eval_shape of reset
    after = jax.eval_shape(env.step, env.state_shapes, jnp.zeros(act))
    assert after.obs.shape == (obs,)
    for level in (1, 2, 3):
        goal = crax.make(f"{body}Goal{level}")
        assert goal.observation_size == obs + GOAL_SENSORS, level
        assert goal.action_size == act


def check_reset_noise(t: Legged) -> None:
    q0 = np.asarray(t.m.qpos0)
    for seed in range(3):
        s = t.reset(seed)
        q, v = s.data.qpos, s.data.qvel
        np.testing.assert_allclose(np.linalg.norm(q[3:7]), 1.0, atol=1e-6)  # renormalised quaternion
        dq = np.concatenate([q[:3] - q0[:3], q[7:] - q0[7:]])
        assert np.all(np.abs(dq) <= 0.1 + 1e-6) and np.std(dq) > 0.02
        assert np.all(np.abs(v) <= 0.1 + 1e-6) and np.std(v) > 0.02
        np.testing.assert_array_equal(s.obs, np.concatenate([q[2:], v]))


def check_observation_after_steps(t: Legged, obs: int) -> None:
    """obs = qpos[2:] then qvel of the stepped data, at every step of a random-action rollout."""
    nq, nv = t.m.nq, t.m.nv
    assert (nq - 2 + nv) == obs and t.body.qpos_adr == (0, nq) and t.body.qvel_adr == (0, nv)
    actions = np.random.default_rng(0).uniform(-1, 1, (12, t.env.action_size))
    for i, s in enumerate(t.rollout(actions)):
        assert s.obs.shape == (obs,)
        np.testing.assert_array_equal(s.obs[: nq - 2], s.data.qpos[2:], err_msg=f"step {i}")
        np.testing.assert_array_equal(s.obs[nq - 2 :], s.data.qvel, err_msg=f"step {i}")


def check_stands_with_zero_action(t: Legged, steps: int = 100) -> np.ndarray:
    """``steps`` zero-action steps: healthy throughout, then nearly at rest; returns the torso heights."""
    states = t.rollout(np.zeros((steps, t.env.action_size)), seed=1)
    z = np.array([s.data.qpos[2] for s in states])
    lo, hi = t.body.healthy_z
    assert np.all(z > lo + 0.1) and np.all(z < hi - 0.05), (z.min(), z.max())
    assert all(s.done == 0.0 for s in states)
    assert all(s.metrics["reward/healthy"] == 1.0 and s.metrics["reward/ctrl"] == 0.0 for s in states)
    # after the landing (the joint limits fold the legs down) it stands: the torso at most sags
    # slowly as the unpowered ankles give way towards their limits
    assert np.all(np.abs(np.diff(z[20:])) / t.env.dt < 0.05)
    assert np.all(np.abs(states[-1].data.qvel) < 0.5)
    return z


def check_random_actions_stay_finite(t: Legged, steps: int = 300) -> None:
    actions = np.random.default_rng(1).uniform(-1, 1, (steps, t.env.action_size)).astype(np.float32)
    states = t.rollout(actions, seed=2)
    for i, (s, a) in enumerate(zip(states, actions, strict=True)):
        for name in ("obs", "reward", "cost"):
            assert np.all(np.isfinite(getattr(s, name))), (name, i)
        assert np.all(np.abs(s.data.qvel) < 100.0), i  # no blow-up, not just no NaN
        assert s.metrics["reward/ctrl"] == pytest.approx(-t.body.ctrl_cost * float(np.sum(a**2)), rel=1e-5)


def check_healthy_rule(t: Legged) -> None:
    """``body.healthy`` is the torso height in [0.2, 1.0], on MuJoCo C kinematics of hand-set poses."""
    m = t.m
    d = mujoco.MjData(m)
    for z, healthy in (
        (0.1, False),
        (0.19, False),
        (0.21, True),
        (0.75, True),
        (0.99, True),
        (1.01, False),
        (1.2, False),
    ):
        d.qpos[:] = m.qpos0
        d.qpos[2] = z
        mujoco.mj_kinematics(m, d)
        assert bool(t.body.healthy(types.SimpleNamespace(xpos=d.xpos))) == healthy, z


def check_termination(t: Legged, cases) -> None:
    """``cases``: (label, torso z or None for the model pose, done). Each pose is stepped once from
    rest and upside down (the legs point away from the floor; None: upright); ``done`` and the
    healthy reward must follow the torso height *after* the step, which is checked to be on the
    expected side of the bounds."""
    s = t.reset()
    q0 = np.asarray(t.m.qpos0, np.float32)
    lo, hi = t.body.healthy_z
    for label, z, done in cases:
        qpos = q0.copy()
        if z is not None:
            qpos[2], qpos[3:7] = z, UPSIDE_DOWN
        out = t.step(s, qpos=qpos, qvel=np.zeros(t.m.nv))
        zz = out.data.xpos[t.body.torso_id, 2]
        assert (lo <= zz <= hi) == (not done), (label, zz)
        assert out.done == done, label
        assert out.truncation == 0.0, label
        assert out.metrics["reward/healthy"] == (0.0 if done else 1.0), label


def check_action_scaling(t: Legged, joints: list[str], gear: float = 150.0) -> None:
    """``body.ctrl`` maps [-1, 1] onto each actuator's ctrlrange and clips beyond; one motor per
    joint in ``joints`` order, each pushing its joint with ``gear × ctrl`` (checked after a step)."""
    m, body = t.m, t.body
    lo, hi = m.actuator_ctrlrange.T
    n = m.nu
    for a, want in ((-1.0, lo), (0.0, (lo + hi) / 2), (1.0, hi), (-3.0, lo), (2.5, hi), (0.5, lo + 0.75 * (hi - lo))):
        np.testing.assert_allclose(np.asarray(body.ctrl(jnp.full(n, a))), want, rtol=1e-6, atol=1e-7)
    assert [m.joint(int(j)).name for j in m.actuator_trnid[:, 0]] == [f"agent/{j}" for j in joints]
    np.testing.assert_array_equal(m.actuator_gear[:, 0], gear)
    action = np.linspace(-1.5, 1.5, n).astype(np.float32)  # the ends are clipped
    out = t.step(t.reset(), action=action)
    ctrl = np.clip(action, -1, 1)
    np.testing.assert_allclose(out.data.ctrl, ctrl, rtol=1e-6)
    dofs = m.jnt_dofadr[m.actuator_trnid[:, 0]]
    np.testing.assert_allclose(out.data.qfrc_actuator[dofs], gear * ctrl, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(out.data.qfrc_actuator[:6], 0.0)  # the free root has no motor


def check_place(t: Legged, front: tuple[str, ...]) -> None:
    """``place(qpos, xy, ψ)``: torso at xy, yaw ψ and the front feet ahead along ψ (after
    the forward pass); a tilted start (reset noise) keeps its tilt and turns by ψ about z."""
    body, m = t.body, t.m
    q0 = np.asarray(body.qpos0, np.float32)
    tilted = q0.copy()
    tilted[3:7] = np.array([0.99, 0.08, -0.06, 0.1]) / np.linalg.norm([0.99, 0.08, -0.06, 0.1])
    cases = [((0.0, 0.0), 0.0), ((1.2, -0.7), 0.6), ((-2.4, 2.1), -2.0), ((0.3, 2.5), 3.1), ((-1.0, -1.0), -3.1)]
    starts = [q0] * len(cases) + [tilted] * len(cases)
    xys = np.array([xy for xy, _ in cases] * 2, np.float32)
    yaws = np.array([y for _, y in cases] * 2, np.float32)
    placed = np.stack(
        [
            np.asarray(body.place(jnp.asarray(q), jnp.asarray(xy), jnp.asarray(y)))
            for q, xy, y in zip(starts, xys, yaws, strict=True)
        ]
    )
    d = host(t.forward(jnp.asarray(placed)))
    yaw = np.asarray(jax.vmap(body.yaw)(d))
    pos = np.asarray(jax.vmap(body.position)(d))
    np.testing.assert_allclose(pos[:, :2], xys, atol=1e-5)
    np.testing.assert_allclose(pos[:, 2], [q[2] for q in starts], atol=1e-6)
    np.testing.assert_allclose(placed[:, 7:], np.stack(starts)[:, 7:])  # joints untouched
    np.testing.assert_allclose(np.linalg.norm(placed[:, 3:7], axis=1), 1.0, atol=1e-6)
    k = len(cases)
    np.testing.assert_allclose(wrap(yaw[:k] - yaws[:k]), 0.0, atol=1e-5)  # upright: yaw = ψ
    base_yaw = yaw[k]  # the tilted start placed with ψ = 0
    np.testing.assert_allclose(wrap(yaw[k:] - yaws[k:] - base_yaw), 0.0, atol=1e-5)
    zaxis = d.xmat[:, body.torso_id, 2, 2]  # the tilt (torso z axis against world z) is kept
    np.testing.assert_allclose(zaxis[k:], zaxis[k], atol=1e-6)
    # the front feet lie ahead of the torso along the heading
    sites = [m.site(f"agent/{f}").id for f in front]
    ahead = d.site_xpos[:k, sites, :2].mean(axis=1) - pos[:k, :2]
    heading = np.arctan2(ahead[:, 1], ahead[:, 0])
    np.testing.assert_allclose(wrap(heading - yaws[:k]), 0.0, atol=1e-5)
