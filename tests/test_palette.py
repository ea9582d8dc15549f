"""One palette (crax.core.palette) for the colours placeables are built in and the colours renders show."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")  # before any GL context exists; respected by crax.render

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import crax  # noqa: E402
from crax import objects as h  # noqa: E402
from crax import render
from crax.core import palette  # noqa: E402

COLOURS = {
    h.GoalZone: palette.GOAL, h.CylinderZones: palette.HAZARD_ZONE, h.CubeZones: palette.HAZARD_ZONE,
    h.MixedZones: palette.HAZARD_ZONE, h.PathwayZones: palette.PATHWAY_ZONE, h.CylinderPillars: palette.PILLAR,
    h.CubePillars: palette.PILLAR, h.Buttons: palette.BUTTON, h.Gremlins: palette.GREMLIN, h.Block: palette.BLOCK,
}
"""Every built-in placeable's palette colour (a new one must be given one here)."""

ENVS = ("PointGoal2", "PointButton1", "PointPush1", "HalfCheetahPathway1", "ReacherReach1")
"""Between them, every built-in placeable."""


def test_every_builtin_placeable_has_a_palette_colour():
    assert set(COLOURS) == set(h.BUILTIN_HAZARDS)


@pytest.mark.parametrize("env_id", ENVS)
def test_model_and_render_colours_are_the_palette(env_id):
    env = crax.make(env_id)
    placeables = dict(env.unwrapped.suite.placeables)
    built = env.unwrapped.mj_model.geom_rgba
    drawn = render._scene(env).model.geom_rgba
    for label, p in placeables.items():
        ids = np.asarray(p.geom_ids)
        assert ids.size, label
        expected = np.broadcast_to(np.asarray(COLOURS[type(p)], np.float32), (ids.size, 4))
        np.testing.assert_allclose(built[ids], expected, atol=1e-6, err_msg=f"{env_id} {label}: model")
        np.testing.assert_allclose(drawn[ids], expected, atol=1e-6, err_msg=f"{env_id} {label}: render")


def test_envs_cover_every_builtin_placeable():
    seen = {type(p) for env_id in ENVS for p in dict(crax.make(env_id).unwrapped.suite.placeables).values()}
    assert seen == set(h.BUILTIN_HAZARDS)
