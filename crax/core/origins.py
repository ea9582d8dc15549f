"""Which plugin registered a component class, so that an error at any layer can name it.

The plugin registry (:mod:`crax.plugins.manager`) fills these tables as it collects components; the
checks that run when a task is built (:mod:`crax.suites.checks`) read them through :func:`label`.
They live here, below every component, so that no layer imports the plugin registry upward.
"""

from __future__ import annotations

from typing import Any

BUILTIN = "crax.builtin"
"""The plugin name of crax's own components (:mod:`crax.plugins.builtin`)."""

DISTRIBUTIONS: dict[str, str] = {}
"""Installed distribution of each plugin loaded from an entry point, by plugin (entry-point) name."""

OWNERS: dict[type, str] = {}
"""The plugin that registered each component class (filled when a registry collects its tables)."""


def describe_plugin(name: str) -> str:
    """``'name' (distribution)`` for a plugin, as error messages name it."""
    dist = DISTRIBUTIONS.get(name)
    return f"{name!r} ({dist})" if dist else repr(name)


def origin(cls: type) -> str:
    """``plugin 'name' (distribution): `` for a class a third-party plugin registered, else ``''``."""
    plugin = OWNERS.get(cls)
    return "" if plugin in (None, BUILTIN) else f"plugin {describe_plugin(plugin)}: "


def label(what: str, cls: Any) -> str:
    """``plugin 'p' (dist): body class Disk`` (the plugin part only for a third-party plugin's class)."""
    if not isinstance(cls, type):
        return f"{what} {cls!r}"
    return f"{origin(cls)}{what} class {cls.__name__}"
