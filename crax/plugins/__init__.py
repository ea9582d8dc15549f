"""Plugin system: pluggy hook specs, the plugin manager and the component registry."""

from crax.plugins.hookspecs import hookimpl
from crax.plugins.manager import PluginError, Registry, plugin_manager, registry

__all__ = ["PluginError", "Registry", "hookimpl", "plugin_manager", "registry"]
