"""Installing a crax plugin for a test, as ``pip install`` would: a distribution's metadata with
entry points in the group ``crax.plugins`` on ``sys.path``, and the process-wide plugin manager and
registry rebuilt so that ``crax.make`` and ``crax.registry()`` load it."""

from __future__ import annotations

import contextlib
import pathlib
import textwrap
from collections.abc import Iterator, Mapping

import pytest

from crax.plugins import manager


def write_distribution(site: pathlib.Path, dist: str, entry_points: Mapping[str, str]) -> None:
    """``<dist>-0.1.dist-info`` in ``site`` declaring ``entry_points`` (name -> module) in ``crax.plugins``."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[crax.plugins]\n{lines}")


def reload_plugins() -> None:
    """Forgets the process-wide plugin manager and registry; the next use loads entry points anew."""
    manager.plugin_manager.cache_clear()
    manager.registry.cache_clear()


@contextlib.contextmanager
def installed(site: pathlib.Path) -> Iterator[None]:
    """The distributions written in ``site`` are installed inside the block, and gone after it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(site))
        reload_plugins()
        try:
            yield
        finally:
            mp.undo()
            reload_plugins()


@contextlib.contextmanager
def installed_sources(tmp: pathlib.Path, plugins: Mapping[str, tuple[str, str]]) -> Iterator[None]:
    """Plugins given as source installed inside the block: ``{entry-point name: (distribution,
    hooks module source)}``, each module ``<name>_module.py`` importable from ``tmp``."""
    for name, (dist, source) in plugins.items():
        (tmp / f"{name}_module.py").write_text(textwrap.dedent(source))
        write_distribution(tmp / "dists", dist, {name: f"{name}_module"})
    with installed(tmp / "dists"), pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(tmp))
        yield
