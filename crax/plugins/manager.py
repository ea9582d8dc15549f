"""The one plugin manager and the component registry that ``crax.make``, the CLI and
``crax list`` read.

A broken plugin never breaks crax: an entry point that fails to import or to register, or a hook
that raises, is reported once (a warning naming the plugin and the error) and the whole plugin is
skipped; a component class that breaks its kind's contract (:mod:`crax.plugins.validate`) is
reported and left out of its table, and asking for it by name raises that error. A name that
several plugins claim is reported once: crax's own names stay crax's, a name that only third-party
plugins share is used by none of them, and asking for it raises a PluginError saying how to rename
(a clash between third-party plugins must not break an install that never asks for the name:
docs/DECISIONS.md, decision 43). The contracts are described in docs/plugins.md.

Set ``CRAX_DISABLE_PLUGIN_AUTOLOAD=1`` to load only the built-in plugin.
"""

from __future__ import annotations

import functools
import importlib.metadata
import warnings
from typing import TYPE_CHECKING, cast

import pluggy

from crax.core.origins import BUILTIN, DISTRIBUTIONS, OWNERS, describe_plugin
from crax.devices import settings
from crax.plugins import hookspecs
from crax.plugins.hookspecs import CATALOGUES, FAMILIES, KINDS, SINGULAR

if TYPE_CHECKING:
    from crax.suites.catalogue import Catalogue, Task


class PluginError(ValueError):
    """The component name asked for is claimed by two (or more) third-party plugins: a bad name,
    so the CLI reports it as bad input (status 2), as it does an unknown name."""



def _skip(name: str, what: str, error: BaseException) -> None:
    warnings.warn(f"crax plugin {describe_plugin(name)} {what}: {type(error).__name__}: {error}; "
                  "the plugin is skipped (crax and the other plugins work without it)", stacklevel=3)


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
                    warnings.warn(f"crax plugin name {ep.name!r} is declared twice: by {seen[ep.name]} and by {source}; "
                                  f"the second is skipped — rename the entry point in one of the two (its name in "
                                  f'[project.entry-points."{hookspecs.ENTRY_POINT_GROUP}"]), or uninstall one of them',
                                  stacklevel=2)
                continue  # (or the same distribution visible twice on sys.path)
            seen[ep.name] = source
            DISTRIBUTIONS[ep.name] = dist.metadata["Name"]
            try:
                plugin = ep.load()
            except Exception as e:  # noqa: BLE001 - report any import failure by plugin name
                warnings.warn(f"crax plugin {ep.name!r} from {source} failed to import and is skipped: {e!r}", stacklevel=2)
                continue
            try:
                pm.register(plugin, name=ep.name)
                pm.check_pending()  # a hook named like crax's that crax does not define
            except Exception as e:  # noqa: BLE001 - pluggy's validation errors and any registration failure
                if pm.get_plugin(ep.name) is not None:
                    pm.unregister(name=ep.name)
                _skip(ep.name, f"from {source} failed to register", e)
                continue
            _warn_unmarked(pm, plugin, ep.name)


def _warn_unmarked(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    # pluggy registers only functions marked with @hookimpl and ignores the rest without a word
    for attr in sorted(dir(plugin)):
        if (attr.startswith("crax_register_") and callable(getattr(plugin, attr, None))
                and pm.parse_hookimpl_opts(plugin, attr) is None):
            warnings.warn(f"crax plugin {describe_plugin(name)}: function {attr} is not decorated with @hookimpl, so "
                          "crax never calls it — decorate it: `from crax import hookimpl`, then `@hookimpl` above "
                          f"`def {attr}():`", stacklevel=3)


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager: built-ins plus installed ``crax.plugins`` entry points."""
    from crax.plugins import builtin

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(builtin, name=BUILTIN)
    if not settings.switch(settings.DISABLE_PLUGIN_AUTOLOAD):
        _load_entry_points(pm)
    pm.check_pending()
    return pm


class _KindTable:
    """A :class:`Registry` attribute named for a component kind: that kind's table (``registry.bodies`` is
    ``registry.table("bodies")``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.kind = name

    def __get__(self, registry: Registry, owner: type | None = None) -> dict[str, type]:
        return registry.table(self.kind)


class Registry:
    """Name -> class tables for every component kind, merged over all plugins.

    Every plugin's hooks are called once, on the first look-up of any table: a plugin with a hook
    that raises (an import error inside it, say) is reported and skipped as a whole. Each class is
    checked against its kind's contract (:func:`crax.plugins.validate.check_class`); one that
    fails is reported, left out of its table, and :meth:`get` raises its error.

    A name claimed by more than one plugin is reported once, with every claimant, and never breaks
    the other names. A built-in's name stays crax's own (the plugins' classes of that name are
    ignored). A name that only third-party plugins claim is left out of its table, since which one
    loads first depends on the installation order, and :meth:`get` raises a :class:`PluginError`
    naming the plugins and how to rename.
    """

    def __init__(self, pm: pluggy.PluginManager):
        self.pm = pm
        self._tables: dict[str, dict[str, type]] | None = None
        self._rejected: dict[str, dict[str, Exception]] = {}
        self._catalogues: dict[str, Catalogue] = {}
        self._families: dict[type, type] = {}
        self._ids: dict[str, Catalogue] | None = None

    def table(self, kind: str) -> dict[str, type]:
        if kind not in KINDS:
            raise ValueError(f"unknown component kind {kind!r}; valid kinds: {', '.join(KINDS)}")
        if self._tables is None:
            self._tables = self._collect()
        return self._tables[kind]

    def rejected(self, kind: str) -> dict[str, Exception]:
        """Components of ``kind`` left out because they break its contract, or because third-party
        plugins clash on their name: name -> the error :meth:`get` raises."""
        self.table(kind)
        return self._rejected.get(kind, {})

    def _call_hooks(self) -> list[tuple[str, str, list]]:
        """(plugin, kind, classes) for every hook implementation, in registration order (built-ins
        first), without the plugins whose hooks fail."""
        out: list[tuple[str, str, list]] = []
        failed: set[str] = set()
        for kind in (FAMILIES, *KINDS, CATALOGUES):  # families first: the learners' checks read them
            impls = getattr(self.pm.hook, f"crax_register_{kind}").get_hookimpls()
            # built-ins first even against a plugin's tryfirst: they keep their names in a clash
            for impl in sorted(impls, key=lambda impl: impl.plugin_name != BUILTIN):
                if impl.plugin_name in failed:
                    continue
                try:
                    result = impl.function()
                    classes = list(result or ())
                except Exception as e:  # noqa: BLE001 - any failure inside a plugin's hook
                    failed.add(impl.plugin_name)
                    _skip(impl.plugin_name, f"hook crax_register_{kind} failed", e)
                    self.pm.unregister(name=impl.plugin_name)
                    continue
                out.append((impl.plugin_name, kind, classes))
        return [entry for entry in out if entry[0] not in failed]

    def _collect(self) -> dict[str, dict[str, type]]:
        from crax.plugins import validate

        tables: dict[str, dict[str, type]] = {kind: {} for kind in KINDS}
        claims: dict[str, dict[str, list[tuple[str, type]]]] = {kind: {} for kind in KINDS}
        self._rejected = {kind: {} for kind in KINDS}
        self._catalogues, self._ids, self._families = {}, None, {}
        for plugin, kind, classes in self._call_hooks():
            if kind == FAMILIES:
                self._add_families(plugin, classes)
                continue
            if kind == CATALOGUES:
                self._add_catalogues(plugin, classes)
                continue
            for cls in classes:
                if isinstance(cls, type):
                    OWNERS.setdefault(cls, plugin)
                name = getattr(cls, "name", None)
                try:
                    validate.check_class(kind, cls, plugin, families=self._families)
                except (TypeError, ValueError) as e:
                    self._rejected[kind][name if isinstance(name, str) else repr(cls)] = e
                    warnings.warn(f"{e}; it is skipped", stacklevel=4)
                    continue
                name = cast(str, name)  # check_class passed: the class defines a valid name
                claimants = claims[kind].setdefault(name, [])
                if all(cls is not other for _, other in claimants):  # one class returned twice is no clash
                    claimants.append((plugin, cls))
                tables[kind].setdefault(name, cls)
        for kind, names in claims.items():
            for name, claimants in names.items():
                if len(claimants) > 1:
                    self._clash(kind, name, claimants, tables[kind])
        return tables

    def _add_families(self, plugin: str, pairs: list) -> None:
        """Adds a plugin's (family, trainer) pairs; a malformed pair, or a family already registered, is
        reported and skipped."""
        from crax.learners import BaseTrainer, Learner

        for pair in pairs:
            ok = (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(c, type) for c in pair)
                  and issubclass(pair[0], Learner) and issubclass(pair[1], BaseTrainer))
            if not ok:
                warnings.warn(f"plugin {describe_plugin(plugin)}: its crax_register_families hook returned {pair!r}, "
                              "which is not a (family, trainer) pair of a crax.learners.Learner subclass and a "
                              "crax.learners.BaseTrainer subclass; it is skipped", stacklevel=5)
            elif pair[0] in self._families:
                warnings.warn(f"plugin {describe_plugin(plugin)}: family {pair[0].__qualname__} is registered "
                              "already; its second trainer is skipped", stacklevel=5)
            else:
                self._families[pair[0]] = pair[1]

    def families(self) -> dict[type, type]:
        """Every registered learner family's base class -> its trainer class (crax's first)."""
        self.table("learners")
        return dict(self._families)

    def _clash(self, kind: str, name: str, claimants: list[tuple[str, type]], table: dict[str, type]) -> None:
        """Reports a name claimed by several plugins; leaves it out of ``table`` unless it is crax's own."""
        what = SINGULAR[kind]
        claimants = sorted(claimants, key=lambda claim: (claim[0] != BUILTIN, claim[0]))  # one text whatever the load order
        who = " and ".join(f"{'crax' if p == BUILTIN else f'plugin {describe_plugin(p)}'} "
                           f"(class {c.__module__}.{c.__qualname__})" for p, c in claimants)
        fix = ("set the class attribute name to one that `crax list` does not show (docs/plugins.md), "
               "or uninstall one of the distributions")
        if claimants[0][0] == BUILTIN:
            plugins = ", ".join(describe_plugin(p) for p, _ in claimants[1:])
            warnings.warn(f"{what} name {name!r} is claimed by {who}; crax's own {what} keeps the name and the "
                          f"plugin's class is ignored — rename it in {plugins}: {fix}", stacklevel=5)
            return
        error = PluginError(f"{what} name {name!r} is claimed by {who}, so it names neither — rename it in one "
                            f"of the plugins: {fix}")
        del table[name]
        self._rejected[kind][name] = error
        warnings.warn(f"{error}. Asking for {name!r} raises this error; the plugins' other components work",
                      stacklevel=5)

    def _add_catalogues(self, plugin: str, catalogues: list) -> None:
        """Adds a plugin's catalogues; one that is no catalogue, or whose name another plugin's
        catalogue holds (crax's own first), is reported and left out."""
        from crax.suites.catalogue import Catalogue

        who = "crax" if plugin == BUILTIN else f"plugin {describe_plugin(plugin)}"
        for catalogue in catalogues:
            name = getattr(catalogue, "name", None)
            if not isinstance(catalogue, Catalogue) or not isinstance(name, str) or not name:
                warnings.warn(f"{who}: its crax_register_catalogues hook returned {catalogue!r}, which is not a named "
                              "crax.suites.catalogue.Catalogue — return Catalogue instances (e.g. TableCatalogue) with "
                              "a name (docs/plugins.md); it is skipped", stacklevel=5)
            elif name in self._catalogues:
                warnings.warn(f"catalogue name {name!r} of {who} is already a catalogue's; the first keeps it and "
                              f"{who}'s is skipped — rename it (its attribute name)", stacklevel=5)
            else:
                self._catalogues[name] = catalogue

    @property
    def catalogues(self) -> dict[str, Catalogue]:
        """Name -> catalogue (:class:`crax.suites.catalogue.Catalogue`), crax's own first."""
        self.table("suites")
        return self._catalogues

    def _index(self) -> dict[str, Catalogue]:
        """Env id -> the catalogue that lists it; an id two catalogues list is the first's (reported)."""
        if self._ids is None:
            index: dict[str, Catalogue] = {}
            for name, catalogue in list(self.catalogues.items()):
                try:
                    ids = list(catalogue.ids(self))
                except Exception as e:  # noqa: BLE001 - a plugin's catalogue that fails never breaks the others
                    del self._catalogues[name]
                    warnings.warn(f"catalogue {name!r} failed to list its ids: {type(e).__name__}: {e}; it is "
                                  "skipped (crax and the other catalogues work without it)", stacklevel=4)
                    continue
                for env_id in ids:
                    owner = index.setdefault(env_id, catalogue)
                    if owner is not catalogue:
                        warnings.warn(f"env id {env_id!r} is listed by the catalogues {owner.name!r} and "
                                      f"{catalogue.name!r}; {owner.name!r} keeps it — rename it in "
                                      f"{catalogue.name!r}", stacklevel=4)
            self._ids = index
        return self._ids

    def env_ids(self, catalogue: str | None = None) -> list[str]:
        """Every env id of every catalogue (or of the one named), in catalogue order."""
        index = self._index()
        if catalogue is None:
            return list(index)
        if catalogue not in self.catalogues:
            raise ValueError(f"unknown catalogue {catalogue!r}; valid choices: {', '.join(self.catalogues)}")
        return [i for i, owner in index.items() if owner is self.catalogues[catalogue]]

    def resolve(self, env_id: str) -> Task:
        """(body class, suite class, level) of ``env_id``, from the catalogue that lists it.

        Raises:
          ValueError: an id no catalogue lists: the error of the catalogue whose form it has
            (the paper's names the unknown suite, body or level; Safety-Gymnasium's lists the ids
            served), else one listing every valid id.
        """
        owner = self._index().get(env_id) if isinstance(env_id, str) else None
        if owner is not None:
            return owner.lookup(env_id, self)
        for catalogue in self.catalogues.values():
            if catalogue.claims(env_id):
                return catalogue.lookup(env_id, self)
        raise ValueError(f"env id {env_id!r} is not of the form {{Body}}{{Suite}}{{Level}}, e.g. PointGoal1; "
                         f"valid ids: {', '.join(self._index())}")

    def get(self, kind: str, name: str) -> type:
        table = self.table(kind)
        if name in table:
            return table[name]
        if name in self._rejected.get(kind, {}):
            error = self._rejected[kind][name]
            # a fresh error each time (re-raising one object grows its traceback), chained to the one
            # made where the class was checked
            raise type(error)(str(error)) from error
        raise ValueError(f"unknown {SINGULAR[kind]} {name!r}; valid choices: {', '.join(sorted(table))}")

    def refresh(self) -> None:
        """Forget the cached tables (after registering a plugin by hand, e.g. in a notebook)."""
        self._tables = None
        self._rejected = {}
        self._catalogues, self._ids = {}, None

    bodies = _KindTable()
    sensors = _KindTable()
    hazards = _KindTable()
    constraints = _KindTable()
    suites = _KindTable()
    learners = _KindTable()


@functools.cache
def registry() -> Registry:
    """The process-wide registry over :func:`plugin_manager`."""
    return Registry(plugin_manager())
