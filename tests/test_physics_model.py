"""Which bodies an env's physics model leaves out, and what it writes back for them (crax.core.physics_model).

A hand-built scene, stepped by nothing: the criteria on each kind of mocap body, and the inert
bodies' kinematics (geoms and sites off their body's origin, turned) against MuJoCo's own.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from crax.core.mjx import mjx
from crax.core.physics_model import STATE_FIELDS, PhysicsModel, field_name, inert_bodies

SCENE = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="agent" pos="0 0 0.2">
      <freejoint/>
      <geom name="agent" type="sphere" size="0.1" mass="1"/>
    </body>
    <body name="zone" mocap="true" pos="1 0 0">
      <geom name="zone" type="cylinder" size="0.3 0.01" contype="0" conaffinity="0"/>
      <geom name="zone/ray" type="ellipsoid" size="0.3 0.3 0.01" pos="0.1 -0.2 0.05" euler="0 20 40"
            contype="0" conaffinity="0"/>
      <site name="zone/site" pos="0 0.3 0" euler="30 0 0"/>
    </body>
    <body name="pillar" mocap="true" pos="-1 0 0">
      <geom name="pillar" type="box" size="0.2 0.2 0.2"/>
    </body>
    <body name="welded" mocap="true" pos="0 2 0">
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/>
    </body>
    <body name="watched" mocap="true" pos="0 -2 0">
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/>
      <site name="watched"/>
    </body>
    <body name="filmed" mocap="true" pos="2 2 0">
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/>
      <camera name="cam"/>
    </body>
    <body name="goal" mocap="true" pos="0 1 0">
      <geom name="goal" type="sphere" size="0.2" contype="0" conaffinity="0"/>
    </body>
    <body name="gremlin" pos="0 2 0.1">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.1"/>
    </body>
  </worldbody>
  <equality><weld body1="welded" body2="gremlin"/></equality>
  <sensor><framepos objtype="site" objname="watched"/></sensor>
</mujoco>
"""


@pytest.fixture(scope="module")
def scene():
    spec = mujoco.MjSpec.from_string(SCENE)
    m = spec.compile()
    return spec, m, PhysicsModel(spec, m, mjx.put_model(m, impl="jax"))


def test_only_mocap_bodies_that_nothing_uses_are_inert(scene):
    _, m, physics = scene
    # the pillar collides, the welded one holds the gremlin, a sensor reads the watched one's site,
    # a camera rides on the filmed one
    assert [m.body(b).name for b in inert_bodies(m)] == ["zone", "goal"]
    assert physics.inert == inert_bodies(m)
    kept = [m.body(int(b)).name for b in physics.kept("body")]
    assert kept == ["world", "agent", "pillar", "welded", "watched", "filmed", "gremlin"]
    assert [physics.mj_model.body(i).name for i in range(physics.mj_model.nbody)] == kept
    assert (physics.mj_model.nq, physics.mj_model.nv, physics.mj_model.neq) == (m.nq, m.nv, m.neq)
    np.testing.assert_array_equal(physics.kept("mocap"), [m.body_mocapid[m.body(n).id] for n in kept[2:6]])
    with pytest.raises(ValueError, match="kind must be one of body, geom, site, mocap, cam, light"):
        physics.kept("tendon")


def test_the_written_back_data_has_mujocos_kinematics_for_the_inert_bodies(scene):
    """Move and turn the zone through its mocap pose; the physics model's forward pass plus the write-back
    give every body, geom and site what MuJoCo's forward pass of the whole scene gives."""
    _, m, physics = scene
    d = mujoco.MjData(m)
    d.qpos[:3] = [0.3, -0.2, 0.25]
    zone = m.body_mocapid[m.body("zone").id]
    d.mocap_pos[zone] = [0.7, -1.1, 0.3]
    d.mocap_quat[zone] = np.array([np.cos(0.3), 0.2, np.sin(0.3), -0.1]) * 3.0  # not a unit quaternion
    scene_data = mjx.put_data(m, d, impl="jax")
    stepped = jax.jit(mjx.forward)(physics.mjx_model, physics.to_physics(scene_data))
    got = physics.from_physics(scene_data, stepped)
    mujoco.mj_forward(m, d)
    for name in ("xpos", "xquat", "xmat", "xipos", "ximat", "geom_xpos", "geom_xmat", "site_xpos", "site_xmat",
                 "subtree_com", "cinert"):
        field = getattr(got._impl if name == "cinert" else got, name)
        np.testing.assert_allclose(np.asarray(field), getattr(d, name).reshape(np.shape(field)), atol=2e-6, err_msg=name)
    inert = list(physics.inert)
    np.testing.assert_array_equal(np.asarray(got._impl.crb)[inert], np.asarray(got._impl.cinert)[inert])
    assert jax.tree.structure(got) == jax.tree.structure(scene_data)
    assert [x.shape for x in jax.tree.leaves(got)] == [x.shape for x in jax.tree.leaves(scene_data)]


def test_the_round_trip_keeps_the_scene_data(scene):
    _, m, physics = scene
    data = mjx.make_data(m)
    data = data.replace(mocap_pos=jnp.arange(m.nmocap * 3, dtype=jnp.float32).reshape(-1, 3))
    back = physics.from_physics(data, physics.to_physics(data), kinematics=False)
    for a, b in zip(jax.tree.leaves(data), jax.tree.leaves(back), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_packed_data_unpacks_to_the_scene_data(scene):
    """pack keeps the physics model's Data and the inert bodies' mocap poses; unpack gives back every
    field of a stepped scene Data bit for bit, and scene_mocap the scene's mocap poses."""
    _, m, physics = scene
    d = mujoco.MjData(m)
    d.qpos[:3] = [0.3, -0.2, 0.25]
    d.mocap_pos[:] = np.arange(m.nmocap * 3).reshape(-1, 3) * 0.1
    goal = m.body_mocapid[m.body("goal").id]
    d.mocap_quat[goal] = [np.cos(0.4), 0.0, 0.0, np.sin(0.4)]
    scene_data = mjx.put_data(m, d, impl="jax")
    stepped = physics.from_physics(scene_data, jax.jit(mjx.forward)(physics.mjx_model, physics.to_physics(scene_data)))
    packed = physics.pack(stepped)
    inert_mocap = m.body_mocapid[list(physics.inert)]
    np.testing.assert_array_equal(np.asarray(packed.mocap_pos), d.mocap_pos[inert_mocap].astype(np.float32))
    np.testing.assert_array_equal(np.asarray(packed.mocap_quat), d.mocap_quat[inert_mocap].astype(np.float32))
    assert packed.physics.xpos.shape == (physics.mj_model.nbody, 3)
    back = physics.unpack(packed)
    paths = jax.tree_util.tree_flatten_with_path(stepped)[0]
    for (path, want), got in zip(paths, jax.tree.leaves(back), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=jax.tree_util.keystr(path))
    # a batch with a leading axis, on the host
    pos, quat = physics.scene_mocap(jax.tree.map(lambda x: jnp.stack([x, x]), packed))
    np.testing.assert_array_equal(pos, np.stack([d.mocap_pos] * 2).astype(np.float32))
    np.testing.assert_array_equal(quat, np.stack([d.mocap_quat] * 2).astype(np.float32))


def test_a_scene_without_inert_bodies_is_stepped_as_it_is():
    m = mujoco.MjModel.from_xml_string('<mujoco><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>')
    physics = PhysicsModel(mujoco.MjSpec(), m, mjx.put_model(m, impl="jax"))
    assert physics.inert == () and physics.mj_model is m
    np.testing.assert_array_equal(physics.kept("geom"), [0])
    data = mjx.make_data(m)
    packed = physics.pack(data)
    assert packed.physics is data and packed.mocap_pos.shape == (0, 3) and physics.unpack(packed) is data


def test_mujocos_state_names_the_fields_a_physics_step_reads():
    assert STATE_FIELDS == {"time", "qpos", "qvel", "act", "history", "qacc_warmstart", "ctrl", "qfrc_applied",
                            "xfrc_applied", "eq_active", "mocap_pos", "mocap_quat", "userdata", "plugin_state"}


@pytest.mark.parametrize("integrator", ["EULER", "RK4", "IMPLICITFAST"])
def test_a_physics_step_reads_only_mujocos_state(integrator):
    """What the training stack leaves out of its carry (crax.core.env.PackedState) must not reach a
    step: the scene's physics model (a free sphere on the floor, a welded box, friction, damping) steps
    three times from a state in contact, once with every other field as a forward pass left it and
    once with them all NaN (or off by one, for integers); every field ends bit for bit alike, but those
    the step does not write (qfrc_fluid without fluid forces...), which keep what each run started with."""
    spec = mujoco.MjSpec.from_string(SCENE)
    spec.option.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator}")
    m = spec.compile()
    physics = PhysicsModel(spec, m, mjx.put_model(m, impl="jax"))
    d = mujoco.MjData(physics.mj_model)
    d.qpos[:3] = [0.3, -0.2, 0.095]  # the sphere (radius 0.1) presses into the floor
    d.qvel[:6] = [0.4, -0.3, 0.1, 1.0, 0.5, -2.0]
    d.ctrl[:] = 0.0
    d.mocap_pos[:] += 0.05
    mujoco.mj_forward(physics.mj_model, d)
    assert d.ncon >= 1
    data = mjx.put_data(physics.mj_model, d, impl="jax")
    paths = jax.tree_util.tree_flatten_with_path(data)[0]

    def spoil(path, x):
        if field_name(path) in STATE_FIELDS or x.size == 0:
            return x
        return jnp.full_like(x, jnp.nan) if jnp.issubdtype(x.dtype, jnp.floating) else x + 1

    spoiled = jax.tree.unflatten(jax.tree.structure(data), [spoil(p, x) for p, x in paths])
    assert any(not np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
               for a, b in zip(jax.tree.leaves(data), jax.tree.leaves(spoiled), strict=True))

    @jax.jit
    def three_steps(both):
        return jax.vmap(lambda d: jax.lax.fori_loop(0, 3, lambda _, d: mjx.step(physics.mjx_model, d), d))(both)

    both = jax.tree.map(lambda a, b: jnp.stack([a, b]), data, spoiled)
    out = three_steps(both)
    written = 0
    for (path, _), start, leaf in zip(paths, jax.tree.leaves(both), jax.tree.leaves(out), strict=True):
        x, x0 = np.asarray(leaf), np.asarray(start)
        if field_name(path) not in STATE_FIELDS and np.array_equal(x, x0, equal_nan=True):
            continue  # not written by a step: each run keeps its own start
        np.testing.assert_array_equal(x[0], x[1], err_msg=jax.tree_util.keystr(path))
        written += 1
    assert written >= 40 and np.all(np.isfinite(np.asarray(out.qpos)))


def test_a_pack_with_fields_keeps_those_and_an_unpack_fills_the_rest(scene):
    """pack(data, fields) keeps the named fields and the inert bodies' mocap poses; physics_data puts
    make_data's values where the others were; unpack(forward=True) is MJX's forward pass of the state."""
    _, m, physics = scene
    d = mujoco.MjData(m)
    d.qpos[:3] = [0.3, -0.2, 0.25]
    d.qvel[:3] = [0.1, 0.2, -0.3]
    d.mocap_pos[:] = np.arange(m.nmocap * 3).reshape(-1, 3) * 0.1
    mujoco.mj_forward(m, d)
    scene_data = mjx.put_data(m, d, impl="jax")
    packed = physics.pack(scene_data, STATE_FIELDS | {"xpos"})
    kept = {field_name(p) for p, _ in jax.tree_util.tree_flatten_with_path(packed.physics)[0]}
    assert kept == (STATE_FIELDS | {"xpos"}) & {field_name(p) for p, _ in jax.tree_util.tree_flatten_with_path(scene_data)[0]}
    assert packed.physics.xmat is None and packed.physics.qpos is not None
    whole = physics.physics_data(packed)
    initial = mjx.make_data(physics.mjx_model)
    full = physics.to_physics(scene_data)
    for (path, got), want, init in zip(jax.tree_util.tree_flatten_with_path(whole)[0], jax.tree.leaves(full),
                                       jax.tree.leaves(initial), strict=True):
        expected = want if field_name(path) in kept else init
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected), err_msg=jax.tree_util.keystr(path))
    forwarded = jax.jit(lambda p: physics.unpack(p, forward=True))(packed)
    for name in ("xpos", "xmat", "geom_xpos", "site_xpos", "subtree_com", "qfrc_bias", "qacc"):
        np.testing.assert_allclose(np.asarray(getattr(forwarded, name)), getattr(d, name).reshape(
            np.shape(getattr(forwarded, name))), atol=2e-5, err_msg=name)
    with pytest.raises(ValueError, match="fields"):
        physics.physics_data(packed.replace(physics=packed.physics.replace(qpos=jnp.zeros(2), _impl=None)))
