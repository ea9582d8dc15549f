"""The contracts of plugin components, checked where a mistake is first visible.

At registration (:func:`check_class`, called by the registry for every class a hook returns):
what a class must define (``name``, the methods of its kind, a navigation body's ``place``). When
a task is built (:class:`crax.suites.base.TaskEnv`, ``crax.make``): what only an instance or its
MJCF shows (a body's root body ``torso``, its actuators, every geom's collision category, each
constraint's ``term``, each sensor's ``size``, and, by tracing, the shapes of costs and
observations). Every error names the plugin, the class and the fix; docs/plugins.md describes the
contracts.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping
from typing import Any

import mujoco

from crax.plugins.manager import BUILTIN, OWNERS, SINGULAR, describe_plugin

GUIDE = "docs/plugins.md"


def origin(cls: type) -> str:
    """``plugin 'name' (distribution): `` for a class a third-party plugin registered, else ``''``."""
    plugin = OWNERS.get(cls)
    return "" if plugin in (None, BUILTIN) else f"plugin {describe_plugin(plugin)}: "


def label(what: str, cls: Any) -> str:
    """``plugin 'p' (dist): body class Disk`` (the plugin part only for a third-party plugin's class)."""
    if not isinstance(cls, type):
        return f"{what} {cls!r}"
    return f"{origin(cls)}{what} class {cls.__name__}"


def check_body_asset(body: Any) -> None:
    """FileNotFoundError naming the plugin, the class and the fix when a body's ``asset`` cannot be
    read from its ``asset_package`` (bodies that build their MJCF in code are not checked)."""
    from crax.bodies.base import Body

    if type(body).mjcf is not Body.mjcf:
        return
    where = f"package {body.asset_package!r}" if body.asset_package else "crax's own crax/bodies/assets"
    try:
        path = body.asset_file()
        missing = "" if path.is_file() else f"is not in {where} ({path})"
    except ModuleNotFoundError:
        missing = f"cannot be read: asset_package {body.asset_package!r} is no importable package"
    if missing:
        raise FileNotFoundError(f"{label('body', type(body))}: asset {body.asset!r} {missing} — set asset_package "
                                "to the package that holds the file (read with importlib.resources) and declare "
                                "the file as its package data")


def _overrides(cls: type, base: type, method: str) -> bool:
    return getattr(cls, method, None) is not getattr(base, method)


def _bases() -> dict[str, type]:
    from crax.bodies.base import Body
    from crax.hazards.base import Placeable
    from crax.hazards.constraints import Constraint
    from crax.learners.base import ConstrainedPPO
    from crax.sensors.base import Sensor
    from crax.suites.base import Suite

    return {"bodies": Body, "sensors": Sensor, "hazards": Placeable, "constraints": Constraint, "suites": Suite,
            "learners": ConstrainedPPO}


# Ids are {Body}{Suite}{Level}: a suite name must end in a letter, or its level digits would run into it.
_NAME_FORMS = {
    "bodies": (r"[A-Za-z][A-Za-z0-9]*", "letters and digits, starting with a letter (it is the start of env ids)"),
    "suites": (r"[A-Za-z](?:[A-Za-z0-9]*[A-Za-z])?", "letters and digits, starting and ending with a letter "
                                                      "(the level follows it in env ids)"),
    "sensors": (r"[A-Za-z][A-Za-z0-9_\-]*", "letters, digits, '_' and '-' (it is given on the command line)"),
    "constraints": (r"[A-Za-z][A-Za-z0-9_\-]*", "letters, digits, '_' and '-' (it is given on the command line)"),
    "hazards": (r"[A-Za-z][A-Za-z0-9_\-]*", "letters, digits, '_' and '-'"),
    "learners": (r"[A-Za-z][A-Za-z0-9_\-]*", "letters, digits, '_' and '-' (it is a `crax train` subcommand)"),
}


def check_class(kind: str, cls: Any, plugin: str | None = None) -> None:
    """Raises TypeError naming the plugin, the class and the fix when ``cls`` breaks the contract
    of ``kind`` (one of :data:`crax.plugins.manager.KINDS`): every problem found, joined by ``;``.
    ``plugin`` is the plugin whose hook returned ``cls`` (a non-class has no owner to look up)."""
    what = SINGULAR[kind]
    if not isinstance(cls, type):
        who = "" if plugin in (None, BUILTIN) else f"plugin {describe_plugin(plugin)}: "
        raise TypeError(f"{who}its crax_register_{kind} hook returned {cls!r}, which is not a class — return the "
                        f"{what} classes themselves (see {GUIDE})")
    base = _bases()[kind]
    if not issubclass(cls, base):
        raise TypeError(f"{label(what, cls)}: is not a subclass of {base.__module__}.{base.__qualname__} — "
                        f"derive it from {base.__qualname__} (see {GUIDE})")
    problems: list[str] = []
    name = vars(cls).get("name")
    pattern, form = _NAME_FORMS[kind]
    if name is None:
        problems.append(f"defines no name — set the class attribute name = {cls.__name__!r} (its registry name)")
    elif not (isinstance(name, str) and re.fullmatch(pattern, name)):
        problems.append(f"name {name!r} is not a valid {what} name — use {form}")
    problems += _CHECKS[kind](cls, base)
    if problems:
        raise TypeError(f"{label(what, cls)}: " + "; ".join(problems))


def _kind_set(value: Any) -> bool:
    return isinstance(value, (set, frozenset)) and all(isinstance(k, str) for k in value)


def _bodies(cls: type, base: type) -> list[str]:
    from crax.bodies.base import ARM, KINDS, NAVIGATION

    out = []
    if not _kind_set(cls.kinds):
        out.append(f"kinds {cls.kinds!r} is not a frozenset of kind names — set kinds = frozenset({{...}}) "
                   f"from {', '.join(KINDS)} (or your own suites' kinds)")
    elif not cls.kinds:
        out.append(f"its kinds are empty, so no suite accepts it — set kinds = frozenset({{...}}) from "
                   f"{', '.join(KINDS)} (or your own suites' kinds): a suite accepts a body whose kinds include "
                   "all the kinds the suite requires")
    elif NAVIGATION in cls.kinds and not _overrides(cls, base, "place"):
        out.append("is a navigation body (its kinds include 'navigation') but defines no place() — define "
                   "place(self, qpos, xy, yaw) returning qpos with the body at xy facing yaw (a slide-x, "
                   "slide-y, hinge-z root: qpos.at[0:2].set(xy).at[2].add(yaw); a free-joint root: derive from "
                   "crax.bodies.free.FreeBody), or drop 'navigation' from kinds")
    if _kind_set(cls.kinds) and ARM in cls.kinds:
        missing = [m for m in ("set_target", "target", "fingertip") if not callable(getattr(cls, m, None))]
        missing += [] if getattr(cls, "links", None) else ["links"]
        if missing:
            out.append(f"is an arm body (its kinds include 'arm') but lacks {', '.join(missing)} — define "
                       "set_target(data, xy), target(data), fingertip(data) and the class attribute links "
                       "(see crax.bodies.reacher.Reacher), or drop 'arm' from kinds")
    if not _overrides(cls, base, "observe"):
        out.append("defines no observe() — define observe(self, data) returning the body's own observation "
                   "(a flat float array)")
    if not _overrides(cls, base, "mjcf") and not isinstance(getattr(cls, "asset", None), str):
        out.append("has no MJCF — set asset = 'file.xml' and asset_package = 'your_package' (the package that "
                   "holds the file, read with importlib.resources), or override mjcf() to build a mujoco.MjSpec")
    elif not _overrides(cls, base, "mjcf") and cls.asset_package is None and not cls.asset_file().is_file():
        declared = next(c for c in cls.__mro__ if "asset" in vars(c)).__module__  # most likely next to the file
        out.append(f"asset {cls.asset!r} has no asset_package, so crax looks for it among its own bodies' assets, "
                   f"where it is not — set asset_package = {declared.rpartition('.')[0] or declared!r} "
                   "(the package that holds the file, read with importlib.resources)")
    if not (isinstance(cls.frame_skip, int) and cls.frame_skip >= 1) or not cls.timestep > 0:
        out.append(f"timestep {cls.timestep!r} and frame_skip {cls.frame_skip!r} must be > 0 and an integer >= 1")
    return out


def _sensors(cls: type, base: type) -> list[str]:
    out = []
    if not _overrides(cls, base, "observe"):
        out.append("defines no observe() — define observe(self, ctx) returning `size` floats read from the "
                   "Context")
    size = vars(cls).get("size")
    if size is not None and not (isinstance(size, int) and size >= 0):
        out.append(f"size {size!r} is not an integer >= 0 — set size to the length of observe()'s output")
    return out + _requires_params(cls)


def _hazards(cls: type, base: type) -> list[str]:
    if not (_overrides(cls, base, "geom") or _overrides(cls, base, "build")):
        return ["defines no geom() — define geom(self) returning the keyword arguments of MjsBody.add_geom "
                "(type, size, ...) of one copy"]
    return []


def _constraints(cls: type, base: type) -> list[str]:
    out = []
    if not _overrides(cls, base, "cost"):
        out.append("defines no cost() — define cost(self, ctx) returning one float per step (a scalar) "
                   "from the Context")
    return out + _requires_params(cls)


def _suites(cls: type, base: type) -> list[str]:
    out = []
    for method, sig in (("init_task", "init_task(self, model, data, key) -> (data, task)"),
                        ("transition", "transition(self, model, before, data, task, action) -> (data, Transition)")):
        if not _overrides(cls, base, method):
            out.append(f"defines no {method}() — define {sig}")
    levels = cls.levels
    if not (isinstance(levels, tuple) and levels and all(isinstance(v, int) and v >= 0 for v in levels)):
        out.append(f"levels {levels!r} is not a non-empty tuple of integers — set e.g. levels = (1, 2, 3)")
    return out + _requires_params(cls)


def _learners(cls: type, base: type) -> list[str]:
    import dataclasses

    from crax.learners.base import PPOConfig

    config = getattr(cls, "Config", None)
    if not (isinstance(config, type) and issubclass(config, PPOConfig) and dataclasses.is_dataclass(config)):
        return [f"Config {config!r} is not a dataclass derived from crax.learners.PPOConfig — define "
                "@dataclasses.dataclass(frozen=True) class MyConfig(PPOConfig) with the extra fields and set Config = MyConfig"]
    return []


_CHECKS = {"bodies": _bodies, "sensors": _sensors, "hazards": _hazards, "constraints": _constraints,
           "suites": _suites, "learners": _learners}


def _requires_params(cls: type) -> list[str]:
    from crax.suites.params import Choice, Range

    out = []
    if not _kind_set(getattr(cls, "requires", frozenset())):
        out.append(f"requires {cls.requires!r} is not a frozenset of body kind names — set requires = frozenset({{...}})")
    params = getattr(cls, "params", {})
    if not (isinstance(params, Mapping) and all(isinstance(v, (Range, Choice)) for v in params.values())):
        out.append("params is not a mapping of parameter name to crax.suites.params.Range or Choice — declare "
                   "e.g. params = {'weight': NON_NEGATIVE}")
    else:
        taken = set(inspect.signature(cls.__init__).parameters)
        unknown = sorted(set(params) - taken) if "kwargs" not in taken else []
        if unknown:
            out.append(f"params names {', '.join(unknown)}, which its constructor does not take — "
                       "declare ranges only for constructor parameters")
    return out


# ---- build time ------------------------------------------------------------------------------------

ROOT = "torso"
"""The body every crax body's MJCF must name as its root: crax reads the agent's position and
heading from it."""


def category_of(contype: int, conaffinity: int) -> Any:
    """The :class:`crax.scene.Category` a geom's contype/conaffinity encode, ``0`` for a visual
    geom (both 0), None for a pair that is no category."""
    from crax.scene import TOUCHES

    if contype == 0 and conaffinity == 0:
        return 0
    for category, touches in TOUCHES.items():
        if contype == int(category) and conaffinity == int(touches):
            return category
    return None


def _geom_name(geom: mujoco.MjsGeom, index: int) -> str:
    if geom.name:
        return repr(geom.name)
    parent = getattr(geom, "parent", None)
    return f"#{index} (unnamed, on body {getattr(parent, 'name', '?')!r})"


_CATEGORY_FIX = ("give every collidable geom a category with crax.scene.collide_as(geom, Category.X) "
                 "(crax.scene.Category: FLOOR, AGENT, AGENT_FLOATING, HAZARD, WALL, PROP, PROP_FLOATING), "
                 "or make it visual only with crax.scene.no_collision(geom)")


def uncategorized(geoms: Iterable[mujoco.MjsGeom], allowed: Iterable[Any] | None = None) -> list[tuple[str, str]]:
    """(name, description) of each geom whose contype/conaffinity is no collision category (or
    not one of ``allowed``); visual geoms (both 0) always pass."""
    allowed = None if allowed is None else set(allowed)
    out = []
    for i, g in enumerate(geoms):
        category = category_of(int(g.contype), int(g.conaffinity))
        if category == 0:
            continue
        if category is None or (allowed is not None and category not in allowed):
            got = "no collision category" if category is None else f"category {category.name}"
            out.append((g.name, f"geom {_geom_name(g, i)} (contype={int(g.contype)}, "
                                f"conaffinity={int(g.conaffinity)}: {got})"))
    return out


def check_body_spec(body: Any, spec: mujoco.MjSpec) -> None:
    """Raises ValueError when a body's own MJCF (before it is attached under ``agent/``) lacks the
    root body ``torso`` or any actuator, or has a collidable geom outside the agent categories;
    TypeError for a navigation body without ``place``."""
    from crax.bodies.base import NAVIGATION, Body
    from crax.scene import Category

    cls = type(body)
    where = label("body", cls)
    if NAVIGATION in body.kinds and not _overrides(cls, Body, "place"):
        raise TypeError(f"{where}: is a navigation body (its kinds include 'navigation') but defines no place() — "
                        "define place(self, qpos, xy, yaw), or drop 'navigation' from kinds (see docs/plugins.md)")
    if spec.body(ROOT) is None:
        names = [b.name for b in spec.bodies if b.name != "world"]
        raise ValueError(f"{where}: its MJCF has no body named {ROOT!r} (bodies: {', '.join(map(repr, names)) or 'none'}) "
                         f"— name the robot's root body {ROOT!r}: crax reads the agent's position and heading from it")
    if len(spec.actuators) == 0:
        raise ValueError(f"{where}: its MJCF has no actuator — add at least one (the action in [-1, 1]^n drives "
                         "the n actuators, scaled to their ctrlrange)")
    bad = uncategorized(spec.geoms, (Category.AGENT, Category.AGENT_FLOATING))
    if bad:
        raise ValueError(f"{where}: {'; '.join(text for _, text in bad)} — the body's collidable geoms must be Category.AGENT (they "
                         "touch the floor) or Category.AGENT_FLOATING (they never touch it: walls, hazards and props "
                         "only): call crax.scene.collide_as(geom, ...) in mjcf(), or set floor_contact and keep "
                         "the base mjcf(), or make the geom visual with crax.scene.no_collision(geom)")


def check_place(body: Any) -> None:
    """Raises ValueError when a navigation body's ``place`` does not return qpos of the body's own
    shape (traced with :func:`jax.eval_shape`, nothing compiled)."""
    import jax
    import jax.numpy as jnp

    from crax.bodies.base import NAVIGATION

    if NAVIGATION not in body.kinds:
        return
    nq = body.qpos_adr[1] - body.qpos_adr[0]
    qpos = jax.ShapeDtypeStruct((nq,), jnp.float32)
    try:
        got = jax.eval_shape(body.place, qpos, jax.ShapeDtypeStruct((2,), jnp.float32),
                             jax.ShapeDtypeStruct((), jnp.float32))
    except Exception as e:  # noqa: BLE001 - a plugin's code, named by class
        raise ValueError(f"{label('body', type(body))}: place(qpos, xy, yaw) fails on qpos of shape ({nq},): "
                         f"{type(e).__name__}: {e}") from None
    if tuple(getattr(got, "shape", ())) != (nq,):
        raise ValueError(f"{label('body', type(body))}: place(qpos, xy, yaw) returns shape {tuple(got.shape)}; "
                         f"expected ({nq},), the body's qpos — return qpos with the root joints set")


def check_scene_geoms(spec: mujoco.MjSpec, owner: str, parts: Mapping[str, str] | None = None) -> None:
    """Raises ValueError when a geom of the scene has no collision category, naming the component
    that just added MJCF: ``owner``, or the label in ``parts`` (geom-name prefix -> label, e.g. a
    suite's placeables) whose prefix the first such geom's name has."""
    bad = uncategorized(spec.geoms)
    if bad:
        owner = next((who for prefix, who in (parts or {}).items() if bad[0][0].startswith(prefix)), owner)
        raise ValueError(f"{owner}: {'; '.join(text for _, text in bad)} — {_CATEGORY_FIX}")


def check_components(constraints: Iterable[Any], sensors: Iterable[Any]) -> None:
    """Raises TypeError when a constraint has no usable ``term`` or a sensor no integer ``size``."""
    for c in constraints:
        term = getattr(c, "term", None)
        if not (isinstance(term, str) and term and "/" not in term):
            got = "no term" if term is None else f"term {term!r}"
            raise TypeError(f"{label('constraint', type(c))}: has {got} — set self.term (a non-empty name without "
                            "'/') in __init__: its cost is reported as metrics['cost/<term>']")
    for s in sensors:
        size = getattr(s, "size", None)
        if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
            raise TypeError(f"{label('sensor', type(s))}: has size {size!r} — set size (an int >= 0, as a class "
                            "attribute or in __init__) to the number of floats observe() returns")
