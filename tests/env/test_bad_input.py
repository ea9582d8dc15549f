"""Task parameters outside their valid range are a ValueError naming parameter, value and range,
raised by ``crax.make`` before any model is compiled (nothing here compiles a model)."""

import dataclasses
import math

import pytest

import crax
import crax.core.scene
from crax.core.params import COUNT, POSITIVE, Choice, Range
from crax.suites import BUILTIN_SUITES, goal
from crax.tasks.catalog import parameter_names as parameters


@pytest.mark.parametrize(
    ("env_id", "name", "value", "valid"),
    [
        ("PointGoal1", "goal_radius", -1, "> 0"),
        ("PointGoal1", "goal_radius", float("nan"), "> 0"),
        ("PointGoal1", "lidar_bins", 0, "an integer >= 1"),
        ("PointGoal1", "lidar_bins", 2.5, "an integer >= 1"),
        ("PointGoal1", "collision_cost", -3.0, ">= 0"),
        ("PointGoal1", "episode_length", 0, "an integer >= 1"),
        ("PointGoal1", "alpha_dist", float("inf"), "a finite number"),
        ("PointButton1", "button_count", 1, "an integer >= 2"),
        ("PointCircle2", "y_bound", 0.0, "> 0 (or inf)"),
        ("HalfCheetahVelocity1", "velocity_threshold", -0.5, ">= 0"),
        ("HalfCheetahVelocity1", "cost_mode", "squared", "one of binary, hinge"),
        ("HalfCheetahPathway2", "max_gap", 0.5, ">= 1"),
        ("ReacherReach1", "shaping_range", 0.0, "> 0"),
    ],
)
def test_out_of_range_names_parameter_value_and_range(no_compile, env_id, name, value, valid):
    with pytest.raises(ValueError) as err:
        crax.make(env_id, **{name: value})
    assert str(err.value) == f"{name} must be {valid}, got {value!r} ({env_id})"


def test_boundary_values_are_accepted(monkeypatch):
    # Reaching compile_spec means validation passed; stop there instead of compiling.
    class Reached(Exception):
        pass

    def compile_spec(spec):
        raise Reached

    monkeypatch.setattr(crax.core.scene, "compile_spec", compile_spec)
    for env_id, overrides in [
        ("PointGoal1", dict(cost_scale=0.0, hazard_compasses=0, alpha_dist=-1.0)),
        ("PointCircle1", dict(x_bound=float("inf"), start_extent=0.0)),
        ("PointButton1", dict(button_count=2, gremlin_travel=0.0)),
    ]:
        with pytest.raises(Reached):
            crax.make(env_id, **overrides)


def test_bad_level_table_value_is_caught(no_compile, monkeypatch):
    radius = goal.Goal.params["goal_radius"]
    monkeypatch.setitem(goal.Goal.params, "goal_radius", dataclasses.replace(radius, levels={**radius.levels, 1: -0.2}))
    with pytest.raises(ValueError, match=r"^goal_radius must be > 0, got -0.2 \(PointGoal1\)$"):
        crax.make("PointGoal1")


def test_unknown_parameter_lists_the_suites_parameters(no_compile):
    with pytest.raises(ValueError) as err:
        crax.make("PointCircle1", goal_radius=0.3)
    message = str(err.value)
    assert message.startswith("unknown parameter(s) goal_radius for PointCircle1; valid parameters: ")
    for name in ("circle_radius", "x_bound", "y_bound", "boundary_cost", "episode_length"):
        assert name in message


@pytest.mark.parametrize("suite", BUILTIN_SUITES, ids=lambda s: s.name)
def test_declared_defaults_are_valid_at_every_level(suite):
    declared = suite.declared()
    assert set(declared) <= set(parameters(suite)), "a declaration names no parameter of the suite"
    numeric = [n for n, p in declared.items() if any(isinstance(v, int | float) and not isinstance(v, bool)
                                                     for v in (p.levels or {0: p.default}).values())]
    assert all(declared[n].valid is not None for n in numeric), "every numeric parameter has declared valid values"
    for level in suite.levels:
        suite.check_params(level, {})  # every default, the level's where it depends on the level
        assert set(suite.level_params(level)) <= set(declared)
        assert set(suite.defaults(level)) == set(declared)


def test_range_descriptions_and_checks():
    assert POSITIVE.describe() == "> 0" and not POSITIVE.valid(0.0) and POSITIVE.valid(1e-9)
    assert COUNT.describe() == "an integer >= 0" and COUNT.valid(0) and not COUNT.valid(1.0)
    unit = Range(0.0, 1.0)
    assert unit.describe() == "in [0, 1]" and unit.valid(0.0) and unit.valid(1.0) and not unit.valid(1.01)
    assert Range(0.0, 1.0, lo_open=True, hi_open=True).describe() == "in (0, 1)"
    for bad in (True, "0.5", (0.5,), None, math.nan, -math.inf):
        assert not unit.valid(bad)
    assert not POSITIVE.valid(math.inf) and Range(0.0, lo_open=True, allow_inf=True).valid(math.inf)
    assert Choice(("a", "b")).valid("a") and not Choice(("a", "b")).valid("c")
