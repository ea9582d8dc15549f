"""The one plugin manager and the component registry that ``crax.make``, the CLI and
``crax list`` read.

Set ``CRAX_DISABLE_PLUGIN_AUTOLOAD=1`` to load only the built-in plugin.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import warnings

import pluggy

from crax.plugins import hookspecs

KINDS = ("bodies", "sensors", "hazards", "constraints", "suites", "learners")
SINGULAR = {"bodies": "body", "sensors": "sensor", "hazards": "hazard", "constraints": "constraint", "suites": "suite", "learners": "learner"}


class PluginError(RuntimeError):
    """A plugin could not be loaded or declared a clashing component name."""


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    # pluggy's own loader aborts on the first broken plugin and silently skips name clashes;
    # load each entry point ourselves so that every failure names its plugin.
    seen: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group != hookspecs.ENTRY_POINT_GROUP:
                continue
            source = f"{dist.metadata['Name']} ({ep.value})"
            if ep.name in seen:
                if seen[ep.name] != source:
                    raise PluginError(f"plugin name {ep.name!r} is declared twice: by {seen[ep.name]} and by {source}")
                continue  # the same distribution visible twice on sys.path
            seen[ep.name] = source
            try:
                plugin = ep.load()
            except Exception as e:  # noqa: BLE001 - report any import failure by plugin name
                warnings.warn(f"crax plugin {ep.name!r} from {source} failed to import and is skipped: {e!r}", stacklevel=2)
                continue
            pm.register(plugin, name=ep.name)


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: built-ins plus installed ``crax.plugins`` entry points."""
    from crax.plugins import builtin

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(builtin, name="crax.builtin")
    if not os.environ.get("CRAX_DISABLE_PLUGIN_AUTOLOAD"):
        _load_entry_points(pm)
    pm.check_pending()
    return pm


class Registry:
    """Name -> class tables for every component kind, merged over all plugins.

    A name claimed by two plugins raises :class:`PluginError` naming both; nothing is shadowed.
    """

    def __init__(self, pm: pluggy.PluginManager):
        self.pm = pm
        self._tables: dict[str, dict[str, type]] = {}

    def table(self, kind: str) -> dict[str, type]:
        if kind not in KINDS:
            raise ValueError(f"unknown component kind {kind!r}; valid kinds: {', '.join(KINDS)}")
        if kind not in self._tables:
            self._tables[kind] = self._collect(kind)
        return self._tables[kind]

    def _collect(self, kind: str) -> dict[str, type]:
        caller = getattr(self.pm.hook, f"crax_register_{kind}")
        out: dict[str, type] = {}
        owner: dict[str, str] = {}
        for impl in caller.get_hookimpls():  # registration order: built-ins first
            for cls in impl.function() or ():
                name = getattr(cls, "name", cls.__name__)
                if name in out and out[name] is not cls:
                    raise PluginError(
                        f"{SINGULAR[kind]} name {name!r} is registered by plugin {owner[name]!r} and again by {impl.plugin_name!r}"
                    )
                out[name], owner[name] = cls, impl.plugin_name
        return out

    def get(self, kind: str, name: str) -> type:
        table = self.table(kind)
        if name not in table:
            raise ValueError(f"unknown {SINGULAR[kind]} {name!r}; valid choices: {', '.join(sorted(table))}")
        return table[name]

    def refresh(self) -> None:
        """Forget the cached tables (after registering a plugin by hand, e.g. in a notebook)."""
        self._tables.clear()

    @property
    def bodies(self) -> dict[str, type]:
        return self.table("bodies")

    @property
    def sensors(self) -> dict[str, type]:
        return self.table("sensors")

    @property
    def hazards(self) -> dict[str, type]:
        return self.table("hazards")

    @property
    def constraints(self) -> dict[str, type]:
        return self.table("constraints")

    @property
    def suites(self) -> dict[str, type]:
        return self.table("suites")

    @property
    def learners(self) -> dict[str, type]:
        return self.table("learners")


@functools.cache
def registry() -> Registry:
    """The process-wide registry over :func:`plugin_manager`."""
    return Registry(plugin_manager())
