"""The class-level contracts of plugin components, checked at registration.

:func:`check_class`, called by the registry for every class a hook returns, checks what a class
must define (``name``, the methods of its kind, a navigation body's ``place``, its parameter
ranges). What only an instance or its MJCF shows is checked when a task is built
(:mod:`crax.suites.checks`). Every error names the plugin, the class and the fix; docs/plugins.md
describes the contracts.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Any

from crax.core.origins import BUILTIN, describe_plugin, label
from crax.plugins.hookspecs import SINGULAR
from crax.suites.checks import GUIDE, overrides


def _bases() -> dict[str, type]:
    from crax.bodies.base import Body
    from crax.costs.base import Constraint
    from crax.learners.shared.learner import Learner
    from crax.objects.base import Placeable
    from crax.sensors.base import Sensor
    from crax.suites.base import Suite

    return {"bodies": Body, "sensors": Sensor, "hazards": Placeable, "constraints": Constraint, "suites": Suite,
            "learners": Learner}


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


def check_class(kind: str, cls: Any, plugin: str | None = None, families: dict[type, type] | None = None) -> None:
    """Raises TypeError naming the plugin, the class and the fix when ``cls`` breaks the contract
    of ``kind`` (one of :data:`crax.plugins.manager.KINDS`): every problem found, joined by ``;``.
    ``plugin`` is the plugin whose hook returned ``cls`` (a non-class has no owner to look up); a learner
    must belong to one of ``families`` (default: crax's own)."""
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
    problems += _learners(cls, families) if kind == "learners" else _CHECKS[kind](cls, base)
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
    elif NAVIGATION in cls.kinds and not overrides(cls, base, "place"):
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
    if not overrides(cls, base, "observe"):
        out.append("defines no observe() — define observe(self, data) returning the body's own observation "
                   "(a flat float array)")
    if not overrides(cls, base, "mjcf") and not isinstance(getattr(cls, "asset", None), str):
        out.append("has no MJCF — set asset = 'file.xml' and asset_package = 'your_package' (the package that "
                   "holds the file, read with importlib.resources), or override mjcf() to build a mujoco.MjSpec")
    elif not overrides(cls, base, "mjcf") and cls.asset_package is None and not cls.asset_file().is_file():
        declared = next(c for c in cls.__mro__ if "asset" in vars(c)).__module__  # most likely next to the file
        out.append(f"asset {cls.asset!r} has no asset_package, so crax looks for it among its own bodies' assets, "
                   f"where it is not — set asset_package = {declared.rpartition('.')[0] or declared!r} "
                   "(the package that holds the file, read with importlib.resources)")
    if not (isinstance(cls.frame_skip, int) and cls.frame_skip >= 1) or not cls.timestep > 0:
        out.append(f"timestep {cls.timestep!r} and frame_skip {cls.frame_skip!r} must be > 0 and an integer >= 1")
    return out


def _sensors(cls: type, base: type) -> list[str]:
    out = []
    if not overrides(cls, base, "observe"):
        out.append("defines no observe() — define observe(self, ctx) returning `size` floats read from the "
                   "Context")
    size = vars(cls).get("size")
    if size is not None and not (isinstance(size, int) and size >= 0):
        out.append(f"size {size!r} is not an integer >= 0 — set size to the length of observe()'s output")
    return out + _requires_params(cls)


def _hazards(cls: type, base: type) -> list[str]:
    if not (overrides(cls, base, "geom") or overrides(cls, base, "build")):
        return ["defines no geom() — define geom(self) returning the keyword arguments of MjsBody.add_geom "
                "(type, size, ...) of one copy"]
    return []


def _constraints(cls: type, base: type) -> list[str]:
    out = []
    if not overrides(cls, base, "cost"):
        out.append("defines no cost() — define cost(self, ctx) returning one float per step (a scalar) "
                   "from the Context")
    return out + _requires_params(cls)


def _suites(cls: type, base: type) -> list[str]:
    out = []
    for method, sig in (("init_task", "init_task(self, model, data, key) -> (data, task)"),
                        ("transition", "transition(self, model, before, data, task, action) -> (data, Transition)")):
        if not overrides(cls, base, method):
            out.append(f"defines no {method}() — define {sig}")
    levels = cls.levels
    if not (isinstance(levels, tuple) and levels and all(isinstance(v, int) and v >= 0 for v in levels)):
        out.append(f"levels {levels!r} is not a non-empty tuple of integers — set e.g. levels = (1, 2, 3)")
    return out + _requires_params(cls)


def _learners(cls: type, families: dict[type, type] | None = None) -> list[str]:
    import dataclasses

    from crax.learners.families import family

    try:
        base = family(cls, families)
    except ValueError as e:
        return [str(e)]
    want = base.Config
    config = getattr(cls, "Config", None)
    if not (isinstance(config, type) and issubclass(config, want) and dataclasses.is_dataclass(config)):
        return [f"Config {config!r} is not a dataclass derived from crax.learners.{want.__name__} — define "
                f"@dataclasses.dataclass(frozen=True) class MyConfig({want.__name__}) with the extra fields and set "
                "Config = MyConfig"]
    return []


_CHECKS = {"bodies": _bodies, "sensors": _sensors, "hazards": _hazards, "constraints": _constraints,
           "suites": _suites}


def _requires_params(cls: type) -> list[str]:
    from crax.core.params import Choice, Param, Range

    out = []
    if not _kind_set(getattr(cls, "requires", frozenset())):
        out.append(f"requires {cls.requires!r} is not a frozenset of body kind names — set requires = frozenset({{...}})")
    params = getattr(cls, "params", {})
    if not (isinstance(params, Mapping) and all(isinstance(v, (Param, Range, Choice)) for v in params.values())):
        out.append("params is not a mapping of parameter name to crax.core.params.Range or Choice — declare "
                   "e.g. params = {'weight': NON_NEGATIVE}")
    else:
        signature = inspect.signature(cls.__init__).parameters
        taken = set(signature)
        var_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values())
        unknown = sorted(set(params) - taken) if not var_keyword else []
        if unknown:
            out.append(f"params names {', '.join(unknown)}, which its constructor does not take — "
                       "declare ranges only for constructor parameters")
    return out
