"""Deliberately broken plugin components: each mistake is an error naming the plugin, the class
and the fix, raised when the plugin is loaded or when a task is built (before any compile)."""

import re
import textwrap
import types
import warnings

import jax.numpy as jnp
import pluggy
import pytest
from flax import nnx

import crax
import crax.tasks.catalog
import crax.tasks.compose
from crax.bodies import Body
from crax.costs import Constraint, HazardProximity
from crax.plugins import Registry, hookimpl, hookspecs, manager
from crax.plugins import builtin as builtin_plugin
from crax.sensors import Sensor
from crax.suites import Goal, TaskEnv
from tests.fake_install import write_distribution
from tests.plugin_examples.disk import Disk
from tests.plugin_examples.drift import Drift
from tests.plugin_examples.puddles import Puddles

WHO = "plugin 'broken' (crax-broken-plugin): "


def _returning(classes):
    return hookimpl(lambda: list(classes))


@pytest.fixture
def install(monkeypatch):
    """Registers a plugin ``broken`` of the distribution ``crax-broken-plugin`` next to the
    built-ins (a pluggy registration, as its entry point would make) and points ``crax.make`` at
    that registry; returns the registry and the warnings its loading gave."""

    def _install(**hooks):
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        pm.register(builtin_plugin, name=manager.BUILTIN)
        pm.register(types.SimpleNamespace(**{f"crax_register_{k}": _returning(v) for k, v in hooks.items()}), name="broken")
        monkeypatch.setitem(manager.DISTRIBUTIONS, "broken", "crax-broken-plugin")
        reg = Registry(pm)
        monkeypatch.setattr(crax.tasks.catalog, "registry", lambda: reg)
        monkeypatch.setattr(crax.tasks.compose, "registry", lambda: reg)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reg.table("bodies")
        return reg, [str(w.message) for w in caught]

    return _install


# ---- bodies ----------------------------------------------------------------------------------------

class Rootless(Disk):
    """The Disk with its root body renamed."""

    name = "Rootless"

    def mjcf(self):
        spec = super().mjcf()
        spec.body("torso").name = "base"
        return spec


class Placeless(Disk):
    """A navigation body that forgot place()."""

    name = "Placeless"
    place = Body.place


class Sticky(Disk):
    """A body whose collidable geom keeps MuJoCo's default contype/conaffinity (1, 1)."""

    name = "Sticky"

    def mjcf(self):
        spec = super().mjcf()
        puck = spec.geom("puck")
        puck.contype = puck.conaffinity = 1
        return spec


def test_body_whose_root_is_not_torso(install):
    install(bodies=[Rootless])
    message = (WHO + "body class Rootless: its MJCF has no body named 'torso' (bodies: 'base') — name the robot's "
               "root body 'torso': crax reads the agent's position and heading from it")
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        crax.make("RootlessGoal1")


def test_navigation_body_without_place_is_rejected_at_registration(install):
    reg, caught = install(bodies=[Placeless])
    message = (WHO + "body class Placeless: is a navigation body (its kinds include 'navigation') but defines no "
               "place() — define place(self, qpos, xy, yaw) returning qpos with the body at xy facing yaw")
    assert [m for m in caught if m.startswith(message)]  # reported when the plugin is loaded
    assert "Placeless" not in reg.bodies and "Placeless" in reg.rejected("bodies")
    with pytest.raises(TypeError, match="^" + re.escape(message)):
        crax.make("PlacelessGoal1")
    assert "PointGoal1" in crax.tasks.catalog.env_ids()  # everything else works


def test_unregistered_navigation_body_without_place_fails_when_built():
    class Unregistered(Placeless):  # built directly, never registered: no plugin to name
        name = "Unregistered"

    with pytest.raises(TypeError, match=r"^body class .*Unregistered: is a navigation body .* defines no place\(\)"):
        TaskEnv(Goal(Unregistered(), 1))


class Packageless(Disk):
    """The Disk without asset_package: crax would look for disk.xml among its own bodies' assets."""

    name = "Packageless"
    asset_package = None


class Unpackaged(Disk):
    """A body whose asset_package does not hold its asset (package data not declared, say)."""

    name = "Unpackaged"
    asset = "unpackaged.xml"


class Misnamed(Disk):
    """A body whose asset_package is misspelt."""

    name = "Misnamed"
    asset_package = "tests.plugin_exampels"


class Kindless(Disk):
    name = "Kindless"
    kinds = frozenset()


def test_body_asset_without_asset_package_names_the_package_to_set(install):
    reg, caught = install(bodies=[Packageless])
    message = (WHO + "body class Packageless: asset 'disk.xml' has no asset_package, so crax looks for it among its "
               "own bodies' assets, where it is not — set asset_package = 'tests.plugin_examples' (the package that "
               "holds the file, read with importlib.resources)")
    assert caught == [message + "; it is skipped"] and "Packageless" not in reg.bodies
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        crax.make("PackagelessGoal1")


def test_body_asset_missing_from_its_package_is_named_when_built(install):
    install(bodies=[Unpackaged, Misnamed])
    fix = " — set asset_package to the package that holds the file (read with importlib.resources) and declare "
    with pytest.raises(FileNotFoundError, match="^" + re.escape(
            WHO + "body class Unpackaged: asset 'unpackaged.xml' is not in package 'tests.plugin_examples' (") +
            r".*unpackaged\.xml\)" + re.escape(fix)):
        crax.make("UnpackagedGoal1")
    with pytest.raises(FileNotFoundError, match="^" + re.escape(
            WHO + "body class Misnamed: asset 'disk.xml' cannot be read: asset_package 'tests.plugin_exampels' is no "
            "importable package" + fix)):
        crax.make("MisnamedGoal1")


def test_body_with_empty_kinds_is_told_so(install):
    reg, caught = install(bodies=[Kindless])
    message = (WHO + "body class Kindless: its kinds are empty, so no suite accepts it — set kinds = frozenset({...}) "
               "from navigation, locomotion, planar, arm, safety_gym (or your own suites' kinds)")
    assert [m for m in caught if m.startswith(message)] and "Kindless" in reg.rejected("bodies")
    with pytest.raises(TypeError, match="^" + re.escape(message)):
        crax.make("KindlessGoal1")


def test_hook_function_without_hookimpl_is_reported(tmp_path, monkeypatch):
    (tmp_path / "unmarked_module.py").write_text(textwrap.dedent("""
        from crax import hookimpl


        def crax_register_bodies():  # the decorator forgotten
            return []


        @hookimpl
        def crax_register_sensors():
            return []
        """))
    write_distribution(tmp_path, "unmarked-plugin", {"unmarked": "unmarked_module"})
    monkeypatch.syspath_prepend(str(tmp_path))
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager._load_entry_points(pm)
    assert [str(w.message) for w in caught if "unmarked" in str(w.message)] == [
        "crax plugin 'unmarked' (unmarked-plugin): function crax_register_bodies is not decorated with @hookimpl, so "
        "crax never calls it — decorate it: `from crax import hookimpl`, then `@hookimpl` above "
        "`def crax_register_bodies():`"]
    assert pm.get_plugin("unmarked") is not None  # its decorated hook is used


def test_body_geom_without_collision_category(install):
    install(bodies=[Sticky])
    message = (WHO + "body class Sticky: geom 'puck' (contype=1, conaffinity=1: no collision category) — the body's "
               "collidable geoms must be Category.AGENT (they touch the floor) or Category.AGENT_FLOATING")
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        crax.make("StickyGoal1")


# ---- geoms added by other components ---------------------------------------------------------------

class Post(Sensor):
    """A sensor whose build adds a collidable geom without a category."""

    name = "Post"
    size = 1

    def build(self, spec):
        spec.worldbody.add_geom(name="post", size=[0.1, 0.1, 0.5], pos=[2.0, 2.0, 0.5])

    def observe(self, ctx):
        return ctx.agent_xy[:1]


class LeakyPuddles(Puddles):
    """Puddles whose first copy is made collidable by hand, without a category."""

    name = "LeakyPuddles"

    def build(self, spec, label):
        super().build(spec, label)
        spec.geom(f"{label}/0").contype = 1


class LeakyDrift(Drift):
    name = "LeakyDrift"

    def __init__(self, body, level, **kwargs):
        super().__init__(body, level, **kwargs)
        self.puddles = LeakyPuddles(self.puddles.count)
        self.constraints = nnx.List([HazardProximity(self.puddles, cost_scale=1.0, term="puddles")])


def test_geom_without_collision_category_names_the_component_that_added_it(install):
    install(sensors=[Post], suites=[LeakyDrift], hazards=[LeakyPuddles])
    fix = ("give every collidable geom a category with crax.core.scene.collide_as(geom, Category.X) (crax.core.scene.Category: "
           "FLOOR, AGENT, AGENT_FLOATING, HAZARD, WALL, PROP, PROP_FLOATING, AGENT_WHEEL), or make it visual only with "
           "crax.core.scene.no_collision(geom)")
    post = WHO + "sensor class Post: geom 'post' (contype=1, conaffinity=1: no collision category) — " + fix
    with pytest.raises(ValueError, match="^" + re.escape(post) + "$"):
        crax.make("PointGoal1", sensors={"Post": {}})
    puddle = WHO + "hazard class LeakyPuddles: geom 'puddles/0' (contype=1, conaffinity=0: no collision category) — "
    with pytest.raises(ValueError, match="^" + re.escape(puddle)):
        crax.make("PointLeakyDrift1")


# ---- constraints -----------------------------------------------------------------------------------

class Termless(Constraint):
    """A cost term that never sets term."""

    name = "Termless"

    def cost(self, ctx):
        return jnp.zeros(())


class Vector(Constraint):
    """A cost term that returns one cost per axis instead of a scalar."""

    name = "Vector"

    def __init__(self, *, term: str = "vector"):
        self.term = term

    def cost(self, ctx):
        return jnp.abs(ctx.agent_xy)


class TermlessDrift(Drift):
    name = "TermlessDrift"

    def __init__(self, body, level, **kwargs):
        super().__init__(body, level, **kwargs)
        self.constraints = nnx.List([Termless()])


class VectorDrift(Drift):
    name = "VectorDrift"

    def __init__(self, body, level, **kwargs):
        super().__init__(body, level, **kwargs)
        self.constraints = nnx.List([*self.constraints, Vector()])


TERMLESS = (WHO + "constraint class Termless: has no term — set self.term (a non-empty name without '/') in "
            "__init__: its cost is reported as metrics['cost/<term>']")


def test_constraint_without_term_added_or_in_a_suite(install):
    install(constraints=[Termless], suites=[TermlessDrift])
    with pytest.raises(TypeError, match="^" + re.escape(TERMLESS) + "$"):
        crax.make("PointGoal1", constraints={"Termless": {}})
    with pytest.raises(TypeError, match="^" + re.escape(TERMLESS) + "$"):
        crax.make("PointTermlessDrift1")


def test_constraint_whose_cost_is_not_a_scalar_added_or_in_a_suite(install):
    install(constraints=[Vector], suites=[VectorDrift])
    for env_id, kwargs in (("PointGoal1", {"constraints": {"Vector": {}}}), ("PointVectorDrift1", {})):
        message = (WHO + f"constraint class Vector: cost returns shape (2,) on {env_id}; expected () — return one "
                   "number per step: reduce it to a scalar (jnp.sum, jnp.max)")
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            crax.make(env_id, **kwargs)


# ---- class contracts at registration ---------------------------------------------------------------

class Nameless(Sensor):
    size = 1

    def observe(self, ctx):
        return ctx.agent_xy[:1]


class Blind(Sensor):
    name = "Blind"
    size = 1


class NotASuite:
    name = "NotASuite"


def test_class_contracts_are_checked_when_the_plugin_loads(install):
    reg, caught = install(sensors=[Nameless, Blind, "Lidar"], suites=[NotASuite])
    expected = [
        WHO + "sensor class Nameless: defines no name — set the class attribute name = 'Nameless' (its registry name)",
        WHO + "sensor class Blind: defines no observe() — define observe(self, ctx) returning `size` floats read "
              "from the Context",
        WHO + "its crax_register_sensors hook returned 'Lidar', which is not a class — return the sensor classes themselves "
        "(see docs/plugins.md)",
        WHO + "suite class NotASuite: is not a subclass of crax.suites.base.Suite — derive it from Suite "
              "(see docs/plugins.md)",
    ]
    for message in expected:
        assert message + "; it is skipped" in caught
    assert len(caught) == len(expected)
    assert {"Blind", "NotASuite"}.isdisjoint({*reg.sensors, *reg.suites}) and "Lidar" in reg.sensors
    with pytest.raises(TypeError, match=re.escape(expected[1])):
        crax.make("PointGoal1", sensors={"blind": {}})
    with pytest.raises(TypeError, match=re.escape(expected[3])):
        crax.make("PointNotASuite1")
