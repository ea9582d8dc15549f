"""Every env id comes from one registry, through the ``crax_register_catalogues`` hook (issue 62)."""

import types
import warnings

import pluggy
import pytest

import crax
from crax.plugins import Registry, hookimpl, hookspecs
from crax.plugins import builtin as builtin_plugin
from crax.suites import Circle, Goal
from crax.suites.catalogue import PAPER, TableCatalogue
from crax.suites.safety_gym import SafetyGoal
from crax.suites.safety_gym.catalogue import SAFETY_GYMNASIUM


def _registry(*plugins: tuple[str, object]) -> Registry:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(builtin_plugin, name="crax.builtin")
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return Registry(pm)


def _plugin(*catalogues) -> object:
    return types.SimpleNamespace(crax_register_catalogues=hookimpl(lambda: list(catalogues)))


def _table(name: str, ids: dict) -> TableCatalogue:
    return TableCatalogue(name, f"{name} ids", r"\w+", lambda: ids)


def test_every_id_is_listed_by_the_registry_catalogue_by_catalogue():
    reg = crax.registry()
    assert list(reg.catalogues)[:2] == ["paper", "safety-gymnasium"]
    assert crax.env_ids() == [i for name in reg.catalogues for i in reg.env_ids(name)]
    sg = reg.env_ids("safety-gymnasium")
    assert sg == SAFETY_GYMNASIUM.ids() and len(sg) == 232  # 122 state-based ids and 110 Vision ids
    assert sum("Vision" in i for i in sg) == 110 and "SafetyPointGoal1Vision-v0" in sg
    assert {"PointGoal1", "SpiderLegs2", "SledGoal2"} <= set(reg.env_ids("paper"))
    assert crax.parse_id("SafetyPointGoal2-v0")[1:] == (SafetyGoal, 2) and crax.parse_id("PointGoal2")[1:] == (Goal, 2)
    with pytest.raises(ValueError, match="unknown catalogue 'vision'; valid choices: paper, safety-gymnasium"):
        reg.env_ids("vision")


def test_an_id_of_no_catalogue_is_explained_by_the_catalogue_of_its_form():
    with pytest.raises(ValueError, match="not a Safety-Gymnasium task crax serves; served: SafetyPointGoal0-v0"):
        crax.parse_id("SafetyPointGoal1-v7")
    with pytest.raises(ValueError, match="names no known suite"):
        crax.parse_id("PointFoo1")
    with pytest.raises(ValueError, match=r"is not of the form \{Body\}\{Suite\}\{Level\}.*valid ids: PointGoal1"):
        crax.parse_id("no id")


def test_a_plugin_catalogue_adds_ids_that_make_list_and_resolve_read():
    ids = {"PointLap1-v0": (crax.registry().bodies["Point"], Circle, 1)}
    reg = _registry(("laps", _plugin(_table("laps", ids))))
    assert reg.env_ids()[-1] == "PointLap1-v0" and reg.env_ids("laps") == ["PointLap1-v0"]
    assert reg.resolve("PointLap1-v0") == ids["PointLap1-v0"]
    assert reg.resolve("PointGoal1")[1:] == (Goal, 1)  # crax's own ids unchanged


def test_a_broken_catalogue_is_reported_and_the_others_work():
    def fails():
        raise RuntimeError("no table")

    clash = _table("clash", {"PointGoal1": (crax.registry().bodies["Point"], Circle, 1)})
    reg = _registry(("bad", _plugin("not a catalogue", TableCatalogue("broken", "broken", r"x", fails))),
                    ("again", _plugin(_table("paper", {}))), ("clash", _plugin(clash)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids = reg.env_ids()
    text = "\n".join(str(w.message) for w in caught)
    assert "returned 'not a catalogue', which is not a named crax.suites.catalogue.Catalogue" in text
    assert "catalogue 'broken' failed to list its ids: RuntimeError: no table" in text
    assert "catalogue name 'paper'" in text and "is already a catalogue's" in text
    assert "env id 'PointGoal1' is listed by the catalogues 'paper' and 'clash'; 'paper' keeps it" in text
    assert list(reg.catalogues) == ["paper", "safety-gymnasium", "clash"] and ids.count("PointGoal1") == 1
    assert reg.resolve("PointGoal1")[1] is Goal and reg.catalogues["paper"] is PAPER


def test_the_example_plugins_catalogue_is_listed_and_builds(capsys):
    from crax.cli import main

    assert {"SledCircuit1-v0", "SledCircuit3-v0"} <= set(crax.env_ids())
    env = crax.make("SledCircuit2-v0")
    assert env.body.name == "Sled" and env.suite.name == "Circle" and env.suite.level == 2
    main(["list"])
    out = capsys.readouterr().out
    assert "the example plugin's Sled circuits:\n  SledCircuit1-v0 SledCircuit2-v0 SledCircuit3-v0" in out
    assert "Safety-Gymnasium's own tasks (docs/safety_gymnasium.md):\n  SafetyPointGoal0-v0" in out
