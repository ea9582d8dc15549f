"""The package's import graph: no loop, and no import from a lower layer up (docs/architecture.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "crax"

# Layers, lowest first; a module may import its own layer and those below it.
LAYERS = [
    ("crax.core", "crax.devices"),
    ("crax.bodies", "crax.sensors", "crax.objects", "crax.learners", "crax.vision"),
    ("crax.costs",),
    ("crax.suites",),
    ("crax.plugins",),
    ("crax.tasks",),
    ("crax.runs", "crax.gymnasium", "crax.render", "crax.video", "crax.bench", "crax.bench_ceiling"),
    ("crax.studies",),
    ("crax.cli",),
    ("crax.reports",),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in ROOT.rglob("*.py")}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """crax modules ``name`` imports anywhere in its file (top level, functions, TYPE_CHECKING blocks)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            subs = {f"{module}.{a.name}" for a in node.names} & known
            found.update(subs)
            if len(subs) < len(node.names):
                found.add(module)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def layer(name: str) -> int | None:
    for i, group in enumerate(LAYERS):
        if any(name == g or name.startswith(g + ".") for g in group):
            return i
    return None


def test_every_module_has_a_layer():
    assert [m for m in modules() if m != "crax" and layer(m) is None] == []


def test_import_crax_loads_nothing_else_and_changes_no_setting():
    """``import crax`` resolves its names on first use: no other crax module, no JAX, no XLA flag."""
    script = ("import os, sys; before = os.environ.get('XLA_FLAGS'); import crax; "
              "print(sorted(m for m in sys.modules if m.startswith(('crax', 'jax')))); "
              "print(os.environ.get('XLA_FLAGS') == before); crax.make; print('crax.tasks.catalog' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["['crax']", "True", "True"]


def test_no_import_goes_up_a_layer():
    upward = sorted(f"{src} -> {dst}" for src, dsts in graph().items() if src != "crax"
                    for dst in dsts if dst != "crax" and layer(dst) > layer(src))
    assert upward == []


def test_no_import_loop():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert loops == []


@pytest.mark.parametrize("text, expected", [
    ("from crax.core import env\n", {"crax.core.env"}),
    ("from crax.core.env import Env\n", {"crax.core.env"}),
    ("import crax.runs\n", {"crax.runs"}),
    ("def f():\n    from crax.tasks import catalog\n", {"crax.tasks.catalog"}),
])
def test_imports_are_read_from_every_form(tmp_path, text, expected):
    path = tmp_path / "m.py"
    path.write_text(text)
    known = {"crax.core.env", "crax.core", "crax.runs", "crax.tasks", "crax.tasks.catalog"}
    assert imports("crax.x", path, known) == expected


MAX_MODULE_LINES = 450
"""A module longer than this holds more than one concept (docs/architecture.md, "Modules stay small")."""


def test_no_module_is_over_the_line_limit():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}
