"""``physics="warp"`` on Warp's CPU device: MJX's Warp implementation against its JAX one.

Skipped unless NVIDIA Warp is importable (``pip install 'crax[warp]'``). Measured in a scratch venv
(warp-lang 1.19.0, mujoco-mjx 3.17.0, jax 0.10.2, CPU): over 12 batched steps of PointCircle1 with
auto-resets, qpos differed from the JAX implementation's by at most 6e-8, observations by 1e-6 (of
entries up to 9.81) and rewards by 6e-9, and the same envs finished on the same steps. The first run
compiles Warp's kernels for the CPU (minutes; cached in ~/.cache/warp afterwards).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.core import physics
from crax.core.batch import BATCH_AXIS
from crax.core.env import Vmap, wrap_for_training

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


WALL_X = 3.0
"""An agent x that puts PointGoal1's Point sphere (radius 0.1) 10 cm into the east wall (a plane at
x = 3). Moving into it, its arrow facing away, it still touches at the step's last collision pass, in
C MuJoCo (0.9 cm deep) and on both MJX implementations."""


def _walled(p: str, n: int) -> tuple[Vmap, jax.Array]:
    env = Vmap(crax.make("PointGoal1", physics=p), n)
    return env, jnp.zeros((n, env.action_size))


def _push(state, touching: np.ndarray):
    """``state`` with the agents of the envs marked in ``touching`` (any batch shape) in the east wall,
    moving into it at 1 m/s."""
    data, mark = state.data, jnp.asarray(touching)
    qpos = data.qpos.at[..., 0].set(jnp.where(mark, WALL_X, data.qpos[..., 0]))
    qpos = qpos.at[..., 1].set(jnp.where(mark, 0.0, qpos[..., 1]))
    qpos = qpos.at[..., 2].set(jnp.where(mark, np.pi, qpos[..., 2]))  # facing away: only the sphere touches
    qvel = data.qvel.at[..., 0].set(jnp.where(mark, 1.0, data.qvel[..., 0]))
    return state.replace(data=data.replace(qpos=qpos, qvel=qvel))


def test_each_env_of_a_warp_batch_counts_its_own_contacts():
    """Warp keeps one contact buffer for the batch; each env's contact cost counts only its own
    contacts (crax.core.contacts), as on the JAX implementation's per-env lists."""
    touching = np.array([False, True, False, True])
    costs = {}
    for p in ("jax", "warp"):
        env, zeros = _walled(p, len(touching))
        state = _push(jax.jit(env.reset)(jax.random.key(0)), touching)
        costs[p] = np.asarray(jax.jit(env.step)(state, zeros).metrics["cost/contact"])
    np.testing.assert_array_equal(costs["warp"], costs["jax"])
    np.testing.assert_array_equal(costs["warp"], np.where(touching, 3.0, 0.0))  # collision_cost per wall touched


def test_a_vmapped_warp_batch_tells_its_envs_apart():
    """A batch vmapped once more (the learners' seeds, named BATCH_AXIS): Warp numbers the
    envs outer-major, and each env still finds its own contacts."""
    touching = np.array([[True, False, False], [False, False, True]])
    costs = {}
    for p in ("jax", "warp"):
        env, zeros = _walled(p, touching.shape[1])
        keys = jax.random.split(jax.random.key(1), touching.shape[0])
        state = _push(jax.jit(jax.vmap(env.reset, axis_name=BATCH_AXIS))(keys), touching)
        step = jax.jit(jax.vmap(env.step, (0, None), axis_name=BATCH_AXIS))
        costs[p] = np.asarray(step(state, zeros).metrics["cost/contact"])
    np.testing.assert_array_equal(costs["warp"], costs["jax"])
    np.testing.assert_array_equal(costs["warp"], np.where(touching, 3.0, 0.0))


def test_a_warp_batch_stepped_by_an_unnamed_vmap_is_refused():
    """Without crax's axis names an env cannot tell which contacts of the shared buffer are its own."""
    env, zeros = _walled("warp", 2)
    state = jax.jit(env.reset)(jax.random.key(0))
    with pytest.raises(ValueError, match=r"PointGoal1 on physics='warp' steps in a batch of 1 envs .* made for 2: "
                                         r"batch a Warp env with crax.core.env.Vmap"):
        jax.vmap(env.unwrapped.step)(state, zeros)


def test_a_contact_read_beyond_touching_is_refused_with_the_parameter():
    """Button presses within press_margin (1 cm) of a button, a pair MuJoCo Warp does not list until
    it touches; press_margin=0 runs."""
    with pytest.raises(ValueError, match=r"PointButton1 cannot run on physics='warp': .*press_margin.*Set that "
                                         r"parameter to 0 .*or use physics='jax'"):
        crax.make("PointButton1", physics="warp")
    assert crax.make("PointButton1", physics="warp", press_margin=0.0).physics == "warp"


def test_a_task_that_reads_the_jax_only_fields_is_refused_with_the_env():
    """The Doggo's touch sensors read contact forces from the JAX implementation's per-env constraint rows."""
    with pytest.raises(ValueError, match=r"SafetyDoggoGoal1-v0 cannot run on physics='warp': .*use physics='jax'"):
        crax.make("SafetyDoggoGoal1-v0", physics="warp")
    # the Accelerometer's cacc, from the stepped data on JAX, is not Warp's pre-integration one (qvel)
    with pytest.raises(ValueError, match=r"sensor Accelerometer fails on PointGoal1: .*requires JAX backend"):
        crax.make("PointGoal1", physics="warp", sensors={"Accelerometer": {}})


def test_only_the_solver_budget_warnings_are_off():
    """crax's small solver budgets end most solves at their limit (decision 3); MuJoCo Warp would print
    a line for each. Its warnings of a full contact or constraint buffer stay on."""
    from mujoco.mjx.third_party.mujoco_warp import OverflowType

    warn = crax.make("AntVelocity1", physics="warp").mjx_model.opt._impl.warn_overflow
    assert not warn & (OverflowType.ITERATIONS | OverflowType.LS_ITERATIONS)
    assert warn & OverflowType.NARROWPHASE and warn & OverflowType.BROADPHASE and warn & OverflowType.NEFC


def test_the_gymnasium_vector_env_on_warp_steps_as_on_jax():
    """Per-env seeds reset one-env stacks vmapped over the seeds (crax.gymnasium.vector), one batch
    for Warp's buffer; the steps after read each env's own contacts, as on JAX."""
    import crax.gymnasium as cg

    touching = np.array([True, False, True])
    out = {}
    for p in ("jax", "warp"):
        venv = cg.CraxVectorEnv(crax.make("PointGoal1", physics=p), len(touching))
        first, _ = venv.reset(seed=[0, 1, 2])
        venv.state = _push(venv.state, touching)
        obs, reward, _, _, info = venv.step(np.zeros((len(touching), 2), np.float32))
        out[p] = (first, obs, reward, info["cost/contact"])
    for got, want in zip(out["warp"], out["jax"], strict=True):
        np.testing.assert_allclose(got, want, **TOLERANCE)
    np.testing.assert_array_equal(out["warp"][3], np.where(touching, 3.0, 0.0))


def test_the_humanoid_reads_warps_own_contact_forces_as_jaxs():
    """The Humanoid observes cfrc_ext (mj_rnePostConstraint): on Warp its step computes it
    (reads_post_constraint), on JAX the body does. Set 20 cm into the floor, one step: with a converged
    solve (100 iterations; the body's 2 part the implementations in hard contact, as the Point's 1)
    forces up to ~1,000 N agree to 0.006 N (measured)."""
    drop, n, obs = 0.2, 2, {}
    for p in ("jax", "warp"):
        env = Vmap(crax.make("HumanoidVelocity1", physics=p, solver_iterations=100), n)
        state = jax.jit(env.reset)(jax.random.key(0))
        state = state.replace(data=state.data.replace(qpos=state.data.qpos.at[:, 2].add(-drop)))
        obs[p] = np.asarray(jax.jit(env.step)(state, jnp.zeros((n, env.action_size))).obs)
    cfrc = slice(-14 * 6, None)  # the last 14 bodies × 6 entries of the observation
    assert np.abs(obs["jax"][:, cfrc]).max() > 500  # the feet press on the floor
    np.testing.assert_allclose(obs["warp"][:, cfrc], obs["jax"][:, cfrc], rtol=1e-4, atol=0.05)
    np.testing.assert_allclose(obs["warp"], obs["jax"], rtol=1e-3, atol=0.05)


def test_a_post_constraint_read_of_a_warp_model_that_skips_the_pass_is_refused():
    """Without reads_post_constraint a Warp model never runs mj_rnePostConstraint: its fields would be zeros."""
    m = mujoco.MjModel.from_xml_string('<mujoco><worldbody><body><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    data = physics.make_data(m, physics.put_model(m, "warp", "Ball1"), "warp", 1)
    with pytest.raises(ValueError, match=r"physics='warp' model computes only when .* sets reads_post_constraint = True"):
        physics.post_constraint(physics.put_model(m, "warp", "Ball1"), data)
    assert physics.post_constraint(physics.put_model(m, "warp", "Ball1", post_constraint=True), data).cfrc_ext.shape[-1] == 6
