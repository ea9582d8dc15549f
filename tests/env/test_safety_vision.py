"""Safety-Gymnasium's 110 Vision ids (crax.suites.safety_gym.vision) against the spaces and cameras
Safety-Gymnasium 1.0.0 reports (tests/data/safety_gym_vision_reference.json, recorded by
tools/safety_gymnasium/sg_vision_reference.py) and its models' extents (tests/data/safety_gym_vision_near.json,
tools/safety_gymnasium/sg_vision_near.py)."""

from __future__ import annotations

import functools
import json
import pathlib

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.core.env import Vmap
from crax.gymnasium.env import CraxEnv
from crax.suites.safety_gym.vision import EXTENT, FLOOR_SIZE, VISION_KEY, VISION_SUITES

REFERENCE = json.loads((pathlib.Path(__file__).parents[1] / "data" / "safety_gym_vision_reference.json").read_text())
NEAR = json.loads((pathlib.Path(__file__).parents[1] / "data" / "safety_gym_vision_near.json").read_text())
IDS = sorted(REFERENCE["ids"])


def test_every_vision_id_is_served():
    assert len(IDS) == 110
    assert sorted(i for i in crax.env_ids() if "Vision" in i) == IDS


@functools.cache
def suite_of(env_id: str):
    body, suite, level = crax.parse_id(env_id)
    return suite(body(), level)


@pytest.mark.parametrize("env_id", IDS)
def test_observation_keys_and_sizes(env_id):
    reference = REFERENCE["ids"][env_id]["observation"]
    suite = suite_of(env_id)
    ours = [(key, list(shape)) for key, shape in suite.observation_keys()]
    ours.append((VISION_KEY, [suite.vision_size, suite.vision_size, 3]))
    assert ours == [(key, space["shape"]) for key, space in reference]


def test_spaces_as_safety_gymnasium_reports_them():
    env = CraxEnv(crax.make("SafetyPointGoal1Vision-v0"))
    reference = REFERENCE["ids"]["SafetyPointGoal1Vision-v0"]
    assert list(env.observation_space.spaces) == [key for key, _ in reference["observation"]]
    for key, space in reference["observation"]:
        ours = env.observation_space[key]
        assert list(ours.shape) == space["shape"] and np.dtype(ours.dtype).name == space["dtype"], key
        for bound, value in (("low", ours.low), ("high", ours.high)):
            expected = {"inf": np.inf, "-inf": -np.inf}.get(space[bound], space[bound])
            np.testing.assert_array_equal(value, np.broadcast_to(np.asarray(expected, value.dtype), value.shape))
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)


def test_vision_size_option():
    env = crax.make("SafetyCarGoal1Vision-v0", vision_size=64)
    assert env.observation_spec[VISION_KEY].shape == (64, 64, 3)
    with pytest.raises(ValueError, match="vision_size"):
        crax.make("SafetyCarGoal1Vision-v0", vision_size=4)


@pytest.mark.parametrize("agent", sorted(REFERENCE["cameras"]))
def test_camera_pose_in_the_agent_body(agent):
    """The ``vision`` camera sits where Safety-Gymnasium's does in the agent's root body, and sees as wide."""
    body, _, _ = crax.parse_id(f"Safety{agent}Goal1Vision-v0")
    m = body().mjcf().compile()
    cam = m.camera("vision")
    ref = REFERENCE["cameras"][agent]
    assert m.body(int(cam.bodyid[0])).name == "torso"
    np.testing.assert_allclose(cam.pos, ref["pos"], atol=1e-6)
    quat, expected = np.asarray(cam.quat), np.asarray(ref["quat"])
    np.testing.assert_allclose(quat * np.sign(quat @ expected), expected, atol=1e-6)
    assert float(m.cam_fovy[cam.id]) == ref["fovy"]
    assert mujoco.mjtCamLight(int(m.cam_mode[cam.id])) == mujoco.mjtCamLight.mjCAMLIGHT_FIXED


def test_extents_are_safety_gymnasiums():
    """Every twin's extent (:data:`EXTENT`) is the median of Safety-Gymnasium's over its recorded resets,
    to 1 % (its near plane: ``znear`` 0.01 times it); one per task and level."""
    assert {cls.task: len(cls.levels) for cls in VISION_SUITES} == {task: len(v) for task, v in EXTENT.items()}
    assert {task: len(v) for task, v in NEAR["tasks"].items()} == {task: len(v) for task, v in EXTENT.items()}
    for task, levels in NEAR["tasks"].items():
        for level, recorded in levels.items():
            assert recorded["znear"] == pytest.approx(0.01)
            assert EXTENT[task][int(level)] == pytest.approx(recorded["extent"]["median"], rel=0.01), (task, level)


@pytest.mark.parametrize("env_id", ["SafetyPointGoal0Vision-v0", "SafetyCarRun0Vision-v0"])
def test_the_twins_scene_is_safety_gymnasiums(env_id):
    """A twin's model has Safety-Gymnasium's extent and floor; its camera sees every geom group and
    nothing nearer than 0.01 extents (Safety-Gymnasium's near plane: 1.4 cm on Goal0, 36 cm on Run)."""
    env = crax.make(env_id, vision_size=8)
    m, suite = env.mj_model, env.suite
    assert m.stat.extent == pytest.approx(EXTENT[suite.task][suite.level])
    assert m.geom("floor").size[0] == (suite.floor_size if suite.task == "Run" else FLOOR_SIZE)
    camera = next(s for s in suite.sensors if getattr(s, "key", None) == VISION_KEY)
    assert camera.settings.geomgroup == (1,) * mujoco.mjNGROUP
    assert camera.settings.znear * m.stat.extent == pytest.approx(0.01 * EXTENT[suite.task][suite.level])


def test_vision_period_puts_the_ray_cast_in_a_branch_of_the_batched_step():
    """``vision_period`` k > 1: the batched step renders in one ``cond`` on whether any env is due (traced,
    not compiled; tests/env/test_camera_sensor.py checks what the branch returns)."""

    def conds(**params):
        env = Vmap(crax.make("SafetyPointGoal0Vision-v0", vision_size=8, **params), 2)
        state = jax.eval_shape(env.reset, jax.random.key(0))
        action = jax.ShapeDtypeStruct((2, env.action_size), jnp.float32)
        return str(jax.make_jaxpr(env.step)(state, action)).count("cond[")

    assert conds(vision_period=3) == conds() + 1
    with pytest.raises(ValueError, match="vision_period"):
        crax.make("SafetyPointGoal0Vision-v0", vision_period=0)
