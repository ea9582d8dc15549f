"""The top-level helpers next to ``crax.make``: ``crax.parameters``, ``crax.env_ids``, ``crax.parse_id``."""

import importlib.util
import pathlib

import pytest

import crax
from crax.core.params import COUNT, Choice
from crax.suites import goal

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_helpers_are_reachable_at_top_level_and_make_shadows_no_module():
    import crax.tasks.catalog

    assert callable(crax.make) and crax.make is crax.tasks.catalog.make  # the function, even after importing its module
    for name in ("make", "parameters", "env_ids", "parse_id", "names", "registry"):
        assert name in crax.__all__ and getattr(crax, name) is not None
    assert importlib.util.find_spec("crax.make") is None  # no module hidden behind the function


def test_parameters_of_point_goal_give_defaults_and_ranges():
    params = crax.parameters("PointGoal3")
    assert list(params)[:4] == ["goal_radius", "alpha_dist", "reward_goal", "cost_scale"]
    assert params["goal_radius"].default == goal.Goal.params["goal_radius"].levels[3]  # the level's value
    assert crax.parameters("PointGoal1")["goal_radius"].default == goal.Goal.params["goal_radius"].levels[1]
    assert params["goal_radius"].doc == goal.Goal.params["goal_radius"].doc != ""
    assert params["goal_radius"].describe() == "> 0"
    assert params["lidar"].valid == Choice(("pseudo", "natural")) and params["lidar"].default == "pseudo"
    assert params["hazard_compasses"].valid == COUNT and params["hazard_compasses"].default == 8
    assert params["episode_length"].default == 1000 and params["episode_length"].describe() == "an integer >= 1"
    assert params["constraints"].describe() == "{registered constraint name: {parameter: value}} (crax.names()['constraints'])"
    with pytest.raises(ValueError, match="names no known suite"):
        crax.parameters("PointNope1")


def test_the_solver_budget_is_the_bodys_unless_given():
    from crax.bodies.point import Point
    from crax.bodies.safety_point import SafetyGymPoint

    assert crax.parameters("PointGoal1")["solver_iterations"].default == Point.solver_iterations
    assert crax.parameters("SafetyPointGoal1-v0")["ls_iterations"].default == SafetyGymPoint.ls_iterations
    env = crax.make("PointGoal1", solver_iterations=7, ls_iterations=3)  # built, not compiled
    assert (env.mj_model.opt.iterations, env.mj_model.opt.ls_iterations) == (7, 3)
    assert (env.mjx_model.opt.iterations, env.mjx_model.opt.ls_iterations) == (7, 3)
    own = crax.make("PointGoal1").mj_model.opt
    assert (own.iterations, own.ls_iterations) == (Point.solver_iterations, Point.ls_iterations)
    with pytest.raises(ValueError, match=r"solver_iterations must be an integer >= 1, got 0 \(PointGoal1\)"):
        crax.make("PointGoal1", solver_iterations=0)


@pytest.mark.parametrize("env_id", ["PointGoal1", "PointButton2", "PointCircle1", "HalfCheetahVelocity1",
                                    "Walker2dPathway2", "ReacherReach3", "HumanoidHeight1", "SpiderLegs1"])
def test_every_default_is_in_its_range_and_accepted_by_make(env_id):
    params = crax.parameters(env_id)
    _, suite, level = crax.parse_id(env_id)
    for p in params.values():
        if p.valid is not None and p.default is not None:
            assert p.valid.valid(p.default), (p.name, p.default, p.describe())
    suite.check_params(level, {p.name: p.default for p in params.values() if p.name in suite.declared()})


def test_docs_and_docstrings_cite_only_the_repository():
    for path in [*ROOT.joinpath("crax").rglob("*.py"), *ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md"]:
        text = path.read_text()
        assert "../shared" not in text and "shared/DESIGN" not in text, path
