"""Each task parameter is declared once (``crax.core.params.Param`` in its suite's ``params``), and
``crax.parameters``, the suites, ``crax params`` and ``docs/parameters.md`` read that declaration."""

import dataclasses
import pathlib

import pytest

import crax
from crax.core.params import POSITIVE, Param
from crax.suites import BUILTIN_SUITES, Goal
from crax.suites.navigation import ARENA_PARAMS, NAVIGATION_PARAMS
from crax.tasks import parameter_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILTIN_IDS = [i for i in crax.env_ids() if crax.parse_id(i)[1] in BUILTIN_SUITES]


def test_parameters_page_is_generated_from_the_declarations():
    text = (ROOT / "docs" / "parameters.md").read_text()
    assert text == parameter_table.page(), f"docs/parameters.md is stale: run {parameter_table.COMMAND}"


def test_the_page_has_one_row_per_declared_parameter():
    text = parameter_table.page()
    for suite in BUILTIN_SUITES:
        section = text.split(f"\n## {suite.name}\n", 1)[1].split("\n## ", 1)[0]
        rows = [line.split("|")[1].strip(" `") for line in section.splitlines() if line.startswith("| `")]
        assert rows == list(suite.declared()), suite.name
    assert "| `goal_radius` | 1: `0.2` · 2: `0.18` · 3: `0.16` | > 0 |" in text


@pytest.mark.parametrize("suite", BUILTIN_SUITES, ids=lambda s: s.name)
def test_builtin_suites_declare_every_parameter_with_a_doc(suite):
    assert suite.params and all(isinstance(p, Param) and p.doc for p in suite.params.values())
    assert suite.declared() == dict(suite.params)
    for level in suite.levels:
        assert suite.level_params(level) == {n: p.levels[level] for n, p in suite.params.items() if p.levels}


def test_navigation_parameters_are_shared_not_repeated():
    for suite in BUILTIN_SUITES:
        if suite.name in ("Goal", "Button", "Push"):
            shared = {**NAVIGATION_PARAMS, **ARENA_PARAMS}
            own = {n: p for n, p in shared.items() if suite.params[n] is p}
            assert set(own) == set(shared) - ({"extent"} if suite.name == "Button" else set()), suite.name


def test_crax_parameters_reads_the_declaration_at_the_ids_level():
    for env_id in BUILTIN_IDS:
        _, suite, level = crax.parse_id(env_id)
        params = crax.parameters(env_id)
        for name, p in suite.declared().items():
            assert (params[name].default, params[name].valid, params[name].doc) == (p.at(level), p.valid, p.doc)


def test_every_builtin_id_builds_its_suite_from_the_declared_defaults():
    """Every id's suite resolves its parameters and builds without compiling a model; its TaskParams
    hold the declared defaults (spot checks) and an override reaches the suite."""
    for env_id in BUILTIN_IDS:
        body, suite_cls, level = crax.parse_id(env_id)
        suite_cls.check_params(level, {}, where=env_id)
        suite = suite_cls(body(), level)
        if suite_cls is Goal:
            assert float(suite.goal_radius[...]) == pytest.approx(Goal.params["goal_radius"].levels[level])
            assert suite.lidar_bins == NAVIGATION_PARAMS["lidar_bins"].default
    assert float(Goal(crax.parse_id("PointGoal1")[0](), 1, goal_radius=0.3).goal_radius[...]) == pytest.approx(0.3)


def test_resolve_fills_defaults_and_rejects_unknown_names():
    values = Goal.resolve(2, {"alpha_dist": 0.5, "goal_radius": None})
    assert values.alpha_dist == 0.5 and values.goal_radius == Goal.params["goal_radius"].levels[2]
    with pytest.raises(TypeError, match=r"^Goal\(\) got unexpected keyword argument\(s\) radius; its parameters: goal_radius, "):
        Goal.resolve(1, {"radius": 0.3})
    with pytest.raises(ValueError, match="^level 4 is not a level of Goal; valid levels: 1, 2, 3$"):
        Goal.resolve(4, {})


def test_param_takes_a_default_or_one_per_level():
    assert Param(0.3, POSITIVE).at(2) == 0.3 and Param(valid=POSITIVE, levels={1: 0.5, 2: 0.4}).at(2) == 0.4
    assert Param(0.3, POSITIVE).describe() == "> 0" and Param(()).describe() == "checked by the task"
    with pytest.raises(TypeError, match="either a default or a default per level"):
        Param(0.3, POSITIVE, levels={1: 0.5})
    with pytest.raises(dataclasses.FrozenInstanceError):
        Param(0.3).default = 0.4


def test_crax_params_prints_each_parameter_of_an_id(capsys):
    from crax.cli.commands import main

    main(["params", "PointGoal2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["parameter", "default", "valid", "values", "meaning"]
    params = crax.parameters("PointGoal2")
    assert [line.split()[0] for line in lines[1:]] == list(params)
    assert lines[1].split()[:3] == ["goal_radius", repr(Goal.params["goal_radius"].levels[2]), ">"]
