"""``physics=`` (crax.core.physics): the choice and its errors, the default left as it was, and the
batch-shared Warp fields that batched code leaves alone. Nothing here needs NVIDIA Warp installed:
where a test needs Warp absent, it hides the package; tests/env/test_physics_warp.py runs Warp itself.
"""

from __future__ import annotations

import sys
import types

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from flax import struct

import crax
from crax.core import batch, physics, stepping
from crax.core.env import Env, State, Vmap, wrap_for_training
from crax.core.mjx import mjx
from crax.learners.shared.trainer import default_devices
from tests import trees

ENV_ID = "PointCircle1"


@pytest.fixture
def no_warp(monkeypatch):
    """NVIDIA Warp and mjx's copy of MuJoCo Warp not importable, whether installed or not."""
    monkeypatch.setitem(sys.modules, "warp", None)
    monkeypatch.setitem(sys.modules, "mujoco.mjx.third_party.mujoco_warp", None)


@pytest.fixture
def fake_warp(monkeypatch):
    """Both importable (as empty modules), for the checks that come after the import."""
    monkeypatch.setitem(sys.modules, "warp", types.ModuleType("warp"))
    monkeypatch.setitem(sys.modules, "mujoco.mjx.third_party.mujoco_warp", types.ModuleType("mujoco_warp"))


@pytest.mark.parametrize("value", ["cuda", "JAX", "", None, 1])
def test_an_unknown_physics_names_the_valid_ones(value):
    with pytest.raises(ValueError, match=rf"^physics must be one of jax, warp, got {value!r} \({ENV_ID}\)$"):
        crax.make(ENV_ID, physics=value)  # checked with the other parameters, before anything is built
    with pytest.raises(ValueError, match=r"physics must be one of jax, warp, got .*pip install 'crax\[warp\]'"):
        physics.check(value)  # TaskEnv's own check, for envs built without crax.make


def test_crax_parameters_lists_physics():
    p = crax.parameters(ENV_ID)["physics"]
    assert (p.default, p.valid.choices) == ("jax", ("jax", "warp"))


def test_warp_not_installed_names_the_extra_before_building_the_model(no_warp, monkeypatch):
    def compile_spec(*a, **k):
        raise AssertionError("the missing package must be found before the model is compiled")

    monkeypatch.setattr("crax.core.scene.compile_spec", compile_spec)
    with pytest.raises(ImportError, match=r"physics='warp' needs NVIDIA Warp: pip install 'crax\[warp\]'") as e:
        crax.make(ENV_ID, physics="warp")
    assert isinstance(e.value, physics.WarpUnavailable) and isinstance(e.value, ValueError)
    assert "physics='jax'" in str(e.value)


class _Tpu:
    platform = "tpu"

    def __str__(self):
        return "TPU_0"


def test_a_device_warp_cannot_run_on_is_refused(fake_warp, monkeypatch):
    def devices(backend=None):
        if backend is not None:
            raise RuntimeError(f"Unknown backend {backend}")
        return [_Tpu()]

    monkeypatch.setattr(jax, "devices", devices)
    with pytest.raises(ValueError, match=r"runs on a CUDA GPU or on the CPU; jax's default device is TPU_0 \(tpu\)"):
        physics.require_warp()


def test_the_cpu_passes_the_device_check(fake_warp):
    assert jax.devices()[0].platform == "cpu"
    physics.require_warp()  # no error


def test_a_model_feature_warp_lacks_is_named_with_the_env(fake_warp, monkeypatch):
    """MuJoCo Warp's put_model refuses what it does not implement with a NotImplementedError in its
    own words; crax passes them on with the env id and the fix."""
    m = mujoco.MjModel.from_xml_string('<mujoco><option solver="PGS"/><worldbody><geom size="1 1 .1" type="plane"/>'
                                       "</worldbody></mujoco>")

    def put_model(model, impl=None, **k):
        assert impl == "warp"
        raise NotImplementedError("mjSOL_PGS is unsupported.")

    monkeypatch.setattr(mjx, "put_model", put_model)
    with pytest.raises(ValueError, match=r"^PointX1 cannot run on physics='warp': MuJoCo Warp does not support a "
                                         r"feature of its model: mjSOL_PGS is unsupported\. Use physics='jax'"):
        physics.put_model(m, "warp", "PointX1")


class _CountingEnv(Env):
    """Records the batch sizes each reset is traced for: on Warp physics and on JAX physics."""

    seen: list[int]

    def __init__(self):
        self.seen = []

    def reset(self, key):
        self.seen.append((physics.worlds("warp"), physics.worlds("jax")))
        z = jnp.zeros(())
        return State(data=z, obs=jnp.zeros(1), reward=z, cost=z, done=z, truncation=z, info={}, metrics={})  # pyright: ignore[reportArgumentType]

    def step(self, state, action):
        return state

    action_size = 1
    episode_length = 1
    dt = 0.1


def test_a_warp_reset_is_sized_for_the_envs_of_the_named_vmaps_around_it():
    """A Warp batch's shared buffers are sized from crax's named vmaps alone (no count passed down):
    one env outside any, Vmap's envs, and those times a vmap of the batch named BATCH_AXIS. JAX
    physics keeps one env's data whatever the batch."""
    env = _CountingEnv()
    env.reset(jax.random.key(0))
    Vmap(env, 3).reset(jax.random.key(0))
    jax.vmap(Vmap(env, 3).reset, axis_name=batch.BATCH_AXIS)(jax.random.split(jax.random.key(0), 4))
    jax.vmap(Vmap(env, 3).reset)(jax.random.split(jax.random.key(0), 4))  # unnamed: not counted
    assert env.seen == [(1, 1), (3, 1), (12, 1), (3, 1)]


def test_world_index_numbers_the_envs_of_named_vmaps_outer_major():
    """As Warp numbers the envs of nested vmaps (``contact__worldid``): the batch axis outside the env
    axis; (0, 1) outside crax's vmaps, and an unnamed vmap adds nothing."""
    def index(_):
        i, n = batch.world_index()
        return jnp.asarray(i) + 100 * n

    assert int(jax.jit(index)(0)) == 100
    envs = jax.vmap(index, axis_name=batch.ENV_AXIS)
    np.testing.assert_array_equal(envs(jnp.zeros(3)), 300 + np.arange(3))
    nested = jax.vmap(envs, axis_name=batch.BATCH_AXIS)(jnp.zeros((2, 3)))
    np.testing.assert_array_equal(nested, 600 + np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(jax.vmap(envs)(jnp.zeros((2, 3))), 300 + np.tile(np.arange(3), (2, 1)))


def test_vmap_names_its_axis_for_the_env():
    seen = []

    class _Probe(_CountingEnv):
        def step(self, state, action):
            seen.append(batch.world_index()[1])
            return state

    env = Vmap(_Probe(), 3)
    state = env.reset(jax.random.key(0))
    jax.eval_shape(env.step, state, jnp.zeros((3, env.action_size)))
    assert seen == [3]


@struct.dataclass
class _Impl:
    qacc: jax.Array
    contact__pos: jax.Array
    nacon: jax.Array


@struct.dataclass
class _Data:
    qpos: jax.Array
    _impl: _Impl


def test_map_per_env_and_select_leave_the_shared_warp_fields_alone():
    """A batch of 4 envs whose data holds a contact buffer of 10 and a counter for all of them, as
    Warp's does: reshaping and selecting touch the per-env fields only."""
    def data(v):
        return _Data(qpos=jnp.full((4, 2), v), _impl=_Impl(qacc=jnp.full((4, 3), v), contact__pos=jnp.full((10, 3), v),
                                                         nacon=jnp.full((1,), v)))

    new, old = data(1.0), data(0.0)
    done = jnp.array([True, False, True, False])
    out = batch.select(done, new, old)
    np.testing.assert_array_equal(out.qpos[:, 0], [1, 0, 1, 0])
    np.testing.assert_array_equal(out._impl.qacc[:, 0], [1, 0, 1, 0])
    assert float(jnp.max(out._impl.contact__pos)) == 0.0 and float(out._impl.nacon[0]) == 0.0  # old's, whole
    flat = batch.map_per_env(lambda x: x.reshape((2, 2, *x.shape[1:])), new)
    assert flat.qpos.shape == (2, 2, 2) and flat._impl.qacc.shape == (2, 2, 3)
    assert flat._impl.contact__pos.shape == (10, 3) and flat._impl.nacon.shape == (1,)
    with pytest.raises((ValueError, TypeError)):  # what jax.tree.map did: the shared buffer has no env axis
        jax.tree.map(lambda x: x.reshape((2, 2, *x.shape[1:])), new)


def test_a_warp_env_trains_on_one_device():
    assert default_devices(0, "warp") == jax.local_devices()[:1]
    assert default_devices(1, "warp") == jax.local_devices()[:1]
    with pytest.raises(ValueError, match=r"physics='warp' trains on one device; got num_devices=2"):
        default_devices(2, "warp")


def test_train_records_physics_only_when_not_the_default():
    from crax.cli.train import env_kwargs_of

    args = types.SimpleNamespace(env=ENV_ID, constraint=(), sensor=(), env_param=(), image_size=None, physics="jax")
    assert env_kwargs_of(args) is None
    assert env_kwargs_of(types.SimpleNamespace(**{**vars(args), "physics": "warp"})) == {"physics": "warp"}
    with pytest.raises(ValueError, match=r"--physics applies to registered env ids"):
        env_kwargs_of(types.SimpleNamespace(**{**vars(args), "env": "pkg.mod:MyEnv", "physics": "warp"}))


def test_bench_with_warp_missing_is_a_clear_error(no_warp, capsys):
    from crax.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--env", ENV_ID, "--physics", "warp", "--num-envs", "2"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "pip install 'crax[warp]'" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_default_physics_is_unchanged_mjx_jax():
    """``physics="jax"`` is the default, and an env built with it steps bit for bit as one built
    without the argument (a batch with auto-resets), whose physics is MJX's JAX ``step`` itself."""
    plain, given = crax.make(ENV_ID, episode_length=3), crax.make(ENV_ID, episode_length=3, physics="jax")
    assert plain.physics == given.physics == "jax"
    assert isinstance(plain.mjx_model._impl, mjx.ModelJAX)
    actions = jax.random.uniform(jax.random.key(1), (7, 4, plain.action_size), minval=-1, maxval=1)

    def rollout(env):
        batch = wrap_for_training(env, 4)

        def body(s, a):
            s = batch.step(s, a)
            return s, s

        return jax.lax.scan(body, batch.reset(jax.random.key(0)), actions)[1]

    a, b = jax.jit(lambda: rollout(plain))(), jax.jit(lambda: rollout(given))()
    assert float(a.done.sum()) > 0  # the auto-reset ran
    def raw(x):
        return jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x

    jax.tree.map(lambda x, y: np.testing.assert_array_equal(raw(x), raw(y)), a, b)

    # One step of the env against MJX's own step on the env's model: the same qpos, bit for bit.
    model = mjx.put_model(plain.mj_model, impl="jax")
    s0 = trees.take(a, (0, 0))  # env 0 of step 0
    s0 = s0.replace(data=plain.physics_model.unpack(s0.data))  # the training stack's state is packed
    action = actions[1, 0]

    def by_hand(d):
        d = d.replace(ctrl=plain.body.ctrl(action))
        return jax.lax.scan(lambda d, _: (mjx.step(model, d), None), d, None, plain.body.frame_skip)[0]

    np.testing.assert_array_equal(jax.jit(plain.step)(s0, action).data.qpos, jax.jit(by_hand)(s0.data).qpos)


RK4_MODEL = """
<mujoco>
  <option integrator="RK4" timestep="0.01"/>
  <worldbody>
    <body pos="0 0 0.3">
      <freejoint/>
      <geom type="box" size="0.1 0.08 0.05" mass="1"/>
      <body pos="0.15 0 0">
        <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="0.2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <general joint="hinge" dyntype="filter" dynprm="0.05" gainprm="2"/>
  </actuator>
</mujoco>
"""
"""A free box falling with a damped, actuated hinge whose actuator has an activation: RK4 integrates
qpos on a free joint (a quaternion) and a hinge, qvel and act. No contact: the stages call the same
forward pass either way, and a collision would only lengthen both compiles."""


def test_rk4_stages_name_their_valid_values(monkeypatch):
    monkeypatch.setenv(stepping.RK4_STAGES_ENV, "unrolled")
    assert stepping.rk4_stages() == "unrolled"
    monkeypatch.setenv(stepping.RK4_STAGES_ENV, "loop")
    with pytest.raises(ValueError, match=r"CRAX_RK4_STAGES='loop' must be one of unrolled, rolled"):
        stepping.rk4_stages()


@pytest.mark.slow  # compiles two to four small programs, MJX's own steps among them
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_substeps_are_mjxs_steps_then_its_forward_pass(integrator, monkeypatch):
    """``stepping.substeps(n, before, forward_after)``, whose loop holds one forward pass (decision 64),
    computes what ``before`` then ``mjx.step``, n times, then (``forward_after``) ``mjx.forward``
    compute, to float32 rounding (XLA may fuse the two programs' operations differently); for RK4
    with MJX's unrolled stages and with ``CRAX_RK4_STAGES=rolled`` (decision 63: the tests' setting,
    which :func:`stepping.step` follows too). ``before`` runs before every step and not before the final
    forward pass: the final ``ctrl`` is the one it set at the last step's time, not at the end's."""
    xml = RK4_MODEL.replace('integrator="RK4"', f'integrator="{integrator}"')
    model = mjx.put_model(mujoco.MjModel.from_xml_string(xml), impl="jax")
    data = mjx.make_data(model)
    n, control_steps = 4, 10

    def before(d):  # a clock-driven control, as Safety-Gymnasium's gremlins move with the clock
        return d.replace(ctrl=1.0 + jnp.sin(7.0 * d.time)[None])

    def record(d):
        return d.qpos, d.qvel, d.act, d.qacc, d.ctrl

    def rollout(control_step):
        def body(d, _):
            d, stepped = control_step(d)
            return d, (record(d), record(stepped))

        return jax.jit(lambda d: jax.lax.scan(body, d, None, control_steps)[1])(data)

    def by_hand(d):
        stepped = jax.lax.scan(lambda d, _: (mjx.step(model, before(d)), None), d, None, n)[0]
        return mjx.forward(model, stepped), stepped

    theirs, theirs_stepped = rollout(by_hand)
    last_step_time = (control_steps * n - 1) * model.opt.timestep
    np.testing.assert_allclose(theirs[4][-1], 1.0 + np.sin(7.0 * last_step_time), rtol=1e-5)
    assert float(theirs[0][-1, 2]) < 0.3 and float(theirs[2][-1, 0]) > 0.1  # it fell and the activation rose

    def close(ours, theirs):  # float32 rounding, relative to each quantity's scale (the hinge's qacc reaches hundreds)
        jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * np.abs(b).max()), ours, theirs)

    for stages in ("unrolled", "rolled") if integrator == "RK4" else ("unrolled",):
        monkeypatch.setenv(stepping.RK4_STAGES_ENV, stages)
        ours = rollout(lambda d: (stepping.substeps(model, d, n, before=before, forward_after=True),) * 2)[0]
        close(ours, theirs)
    if integrator == "RK4":  # rolled, without the forward pass after: what the Velocity tasks and crax bench run
        ours = rollout(lambda d: (jax.lax.scan(lambda d, _: (stepping.step(model, before(d)), None), d, None, n)[0],) * 2)[0]
        close(ours, theirs_stepped)


def test_contacts_count_reduces_an_envs_contact_slots_into_bins():
    """On the JAX implementation: the env's own contact list, every candidate pair a slot (-1 and
    far apart ones included), reduced by the bin the caller gives each slot."""
    from crax.core import contacts

    m = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><geom type="plane" size="5 5 .1"/>'
        '<body pos="0 0 0.05"><freejoint/><geom size=".1"/></body>'
        '<body pos="1 0 1"><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    model = mjx.put_model(m, impl="jax")
    data = jax.jit(mjx.forward)(model, mjx.make_data(model))

    def by_geom(dist, geom):  # the second geom of each touching pair; n (3): not counted
        return jnp.where(dist < 0, geom[:, 1], 3), jnp.ones_like(dist)

    np.testing.assert_array_equal(contacts.count(data, by_geom, 3), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(contacts.count(data, lambda d, g: (g[:, 1], d < 0), 3, "max"), [False, True, False])
    with pytest.raises(ValueError, match=r"reduce must be 'add' or 'max', got 'sum'"):
        contacts.count(data, by_geom, 3, "sum")  # pyright: ignore[reportArgumentType]
