"""Which bodies an env's physics model leaves out, and what it writes back for them (crax.core.inert).

A hand-built scene, stepped by nothing: the criteria on each kind of mocap body, and the inert
bodies' kinematics (geoms and sites off their body's origin, turned) against MuJoCo's own.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from crax.core.inert import PhysicsModel, inert_bodies
from crax.core.mjx import mjx

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
