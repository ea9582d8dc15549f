"""The camera sensor (crax.sensors.camera) on a hand-placed scene: depth and segmentation against
geometry computed by hand, the dict observation it makes, and its errors."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import crax
from crax.core import observation
from crax.core.batch import ENV_AXIS
from crax.core.mjx import mjx
from crax.sensors.camera import ALL_GROUPS, VISIBLE_GROUPS, CameraSensor

SIZE = 9
"""Odd, so the centre pixel looks along the optical axis."""
DEPTH_RANGE = 2.0
NEAR = 0.0144
"""The near plane given (m): Safety-Gymnasium's on Goal0."""


@functools.cache
def env_and_look(channels: str):
    """SafetyPointGoal0 with a 9×9 camera, and a jitted function rendering it with the agent at the
    origin facing +x and the goal parked far behind it."""
    env = crax.make("SafetyPointGoal0-v0", sensors={"camera": {"width": SIZE, "height": SIZE, "channels": channels,
                                                               "depth_range": DEPTH_RANGE, "near": NEAR}})
    body, suite = env.body, env.suite

    @jax.jit
    def look(key):
        state = env.reset(key)
        data = suite.move(state.data, {"goal": jnp.asarray([[-20.0, 0.0]])})
        qpos = body.place(jnp.asarray(body.qpos0, jnp.float32), jnp.zeros(2), jnp.zeros(()))
        data = mjx.forward(env.mjx_model, data.replace(qpos=data.qpos.at[slice(*body.qpos_adr)].set(qpos)))
        return suite.observe(suite.context(env.mjx_model, data, state.info["task"]))

    return env, look


def test_depth_along_the_optical_axis_is_the_floor_computed_by_hand():
    env, look = env_and_look("depth")
    obs = look(jax.random.key(0))
    assert set(obs) == {observation.STATE, "camera"}
    image = np.asarray(obs["camera"])
    assert image.shape == (SIZE, SIZE, 1) and image.dtype == np.uint8
    # Safety-Gymnasium's Point camera: 0.15 above the torso (0.1 up), looking along (1, 0, -0.4)
    height = 0.1 + 0.15
    distance = height * math.sqrt(1 + 0.4**2) / 0.4
    assert image[SIZE // 2, SIZE // 2, 0] == round(distance / DEPTH_RANGE * 255)
    assert np.all(image[0] == 255)  # above the horizon: nothing, the far plane, clipped to the range
    assert np.all(np.diff(image[SIZE // 2 + 1:, SIZE // 2, 0].astype(int)) <= 0)  # nearer towards the bottom


def test_segmentation_names_the_floor_and_the_agent():
    env, look = env_and_look("segmentation")
    image = np.asarray(look(jax.random.key(0))["camera"])[..., 0].astype(int) - 1
    floor = env.mj_model.geom("floor").id
    assert image[SIZE // 2, SIZE // 2] == floor
    assert np.all(image[0] == -1)
    bottom = {env.mj_model.geom(int(g)).name for g in image[-1] if g >= 0}
    assert "agent/agent" in bottom  # the Point's own sphere, below the camera


def test_the_observation_spec_and_state_vector():
    env, _ = env_and_look("rgbd")
    spec = env.observation_spec
    assert spec["camera"].shape == (SIZE, SIZE, 4) and spec["camera"].dtype == jnp.uint8
    plain = crax.make("SafetyPointGoal0-v0")
    assert spec[observation.STATE].shape == plain.observation_spec.shape  # the camera adds nothing to the vector
    with pytest.raises(ValueError, match="observation_spec"):
        _ = env.observation_size


def test_near_plane_and_geom_groups():
    """The near plane given in metres, 1 cm by default, or the model's own (None); the geom groups given, or
    MuJoCo's default ones."""
    env, _ = env_and_look("depth")
    sensor = next(s for s in env.suite.sensors if isinstance(s, CameraSensor))
    m = env.mj_model
    assert sensor.settings.znear * m.stat.extent == pytest.approx(NEAR)
    assert sensor.settings.geomgroup == VISIBLE_GROUPS
    default = CameraSensor(SIZE, SIZE, geomgroup=ALL_GROUPS)
    default.bind(m)
    assert default.settings.znear * m.stat.extent == pytest.approx(0.01) and default.settings.geomgroup == ALL_GROUPS
    own = CameraSensor(SIZE, SIZE, near=None)
    own.bind(m)
    assert own.settings.znear == pytest.approx(m.vis.map.znear)
    with pytest.raises(ValueError, match="near"):
        crax.make("SafetyPointGoal0-v0", sensors={"camera": {"near": -0.1}})
    with pytest.raises(ValueError, match="geomgroup"):
        CameraSensor(geomgroup=(1, 1, 1))


def test_bad_camera_input_names_the_choices():
    with pytest.raises(ValueError, match="bodies that declare one: .*Point"):
        crax.make("HalfCheetahVelocity1", sensors={"camera": {}})
    with pytest.raises(ValueError, match="rgb, depth, rgbd, segmentation"):
        crax.make("PointGoal1", sensors={"camera": {"channels": "infrared"}})
    with pytest.raises(ValueError, match="width"):
        crax.make("PointGoal1", sensors={"camera": {"width": 0}})
    with pytest.raises(ValueError, match="distinct keys"):
        crax.make("SafetyPointGoal0Vision-v0", vision_size=8, sensors={"camera": {"key": "vision"}})
    with pytest.raises(ValueError, match="unknown camera channels"):
        CameraSensor(channels="xyz")


def test_a_render_period_holds_the_frame_and_a_batch_skips_the_ray_cast_when_none_is_due():
    """``period=3``: a fresh image after steps 3, 6, …, the held one after the others; under crax's named
    vmap the ray cast sits in a ``cond`` on whether any env is due, so a batch none of whose envs is due
    casts no ray (a cond on a per-env flag would become a select that computes both sides)."""
    env, look = env_and_look("depth")
    fresh = look(jax.random.key(0))
    sensor = next(s for s in env.suite.sensors if isinstance(s, CameraSensor))
    every = CameraSensor(SIZE, SIZE, "depth", depth_range=DEPTH_RANGE, near=NEAR, period=3)
    every.bind(env.mj_model)
    held = jnp.zeros_like(fresh["camera"])
    state = env.reset(jax.random.key(0))
    body = env.body
    qpos = body.place(jnp.asarray(body.qpos0, jnp.float32), jnp.zeros(2), jnp.zeros(()))

    data = env.suite.move(state.data, {"goal": jnp.asarray([[-20.0, 0.0]])})
    data = jax.jit(mjx.forward)(env.mjx_model, data.replace(qpos=data.qpos.at[slice(*body.qpos_adr)].set(qpos)))
    ctx = env.suite.context(env.mjx_model, data, state.info["task"])

    def one(steps, camera=every):
        return camera.observe_every(ctx, held, steps)

    batch = jax.jit(jax.vmap(one, axis_name=ENV_AXIS))
    images = np.asarray(batch(jnp.asarray([3, 4, 6])))
    np.testing.assert_array_equal(images[0], fresh["camera"])  # due: rendered, as the period-1 camera renders
    np.testing.assert_array_equal(images[1], held)  # not due: the held frame
    np.testing.assert_array_equal(images[2], fresh["camera"])
    assert sensor.period == 1 and np.asarray(fresh["camera"]).any()
    def jaxpr(camera):
        return str(jax.make_jaxpr(jax.vmap(lambda n: one(n, camera), axis_name=ENV_AXIS))(jnp.asarray([4, 5])))

    assert "cond[" in jaxpr(every) and "cond[" not in jaxpr(sensor)  # a branch, not a select of both sides
    np.testing.assert_array_equal(batch(jnp.asarray([4, 5, 7])), np.zeros((3, *held.shape), np.uint8))
    with pytest.raises(ValueError, match="period must be an integer >= 1"):
        CameraSensor(period=0)
    with pytest.raises(ValueError, match="period"):
        crax.make("PointGoal1", sensors={"camera": {"period": 0}})
