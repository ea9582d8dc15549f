"""Tables of task parameters, read from the suites' declarations (:meth:`crax.suites.base.Suite.declared`):
``docs/parameters.md`` (:func:`page`) and ``crax params ID`` (:func:`id_table`). Defaults are never
typed by hand in the docs; regenerate the page after changing a declaration::

    python -m crax.tasks.parameter_table > docs/parameters.md

(``tests/test_parameter_docs.py`` fails while the page is out of date.)
"""

from __future__ import annotations

from typing import Any

from crax.bodies import BUILTIN_BODIES
from crax.core.params import Param
from crax.suites import BUILTIN_SUITES
from crax.suites.base import Suite
from crax.tasks import catalog, compose

COMMAND = "python -m crax.tasks.parameter_table > docs/parameters.md"
"""What regenerates ``docs/parameters.md``."""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _value(value: Any) -> str:
    return f"`{_cell(repr(value))}`"


def default_text(param: Param) -> str:
    """A parameter's default in Markdown: ``0.3``, or ``1: 0.2 · 2: 0.18 · 3: 0.16`` by level."""
    if param.levels is None:
        return _value(param.default)
    return " · ".join(f"{level}: {_value(value)}" for level, value in param.levels.items())


def suite_table(suite: type[Suite]) -> str:
    """The Markdown table of a suite's parameters: name, default (by level), valid values, meaning."""
    rows = ["| parameter | default | valid values | meaning |", "|---|---|---|---|"]
    rows += [f"| `{name}` | {default_text(p)} | {_cell(p.describe())} | {_cell(p.doc)} |"
             for name, p in suite.declared().items()]
    return "\n".join(rows)


def env_table() -> str:
    """The Markdown table of the parameters every id takes (the env's and the added components)."""
    rows = ["| parameter | default | valid values | meaning |", "|---|---|---|---|"]
    rows += [f"| `{name}` | {default_text(p)} | {_cell(p.describe())} | {_cell(p.doc)} |"
             for name, p in catalog.ENV_PARAMETERS.items()]
    rows += [f"| `{kind}` | `None` | {_cell(catalog.Parameter(kind, None, None).describe())} | "
             f"{_cell(catalog.COMPONENT_DOCS[kind])} |" for kind in compose.KINDS]
    return "\n".join(rows)


def page() -> str:
    """``docs/parameters.md``: one table per built-in suite, then the parameters every id takes."""
    parts = [
        "# Task parameters",
        "",
        f"<!-- Generated from the suites' declarations by `{COMMAND}`; do not edit. -->",
        "",
        "Every keyword argument `crax.make(id, ...)` accepts, by suite: its default (where it depends on",
        "the level, one per level), its valid values and what it is. `crax.parameters(id)` and",
        "`crax params ID` give the same for one id (plugin suites included); `crax.make` raises a",
        "`ValueError` naming the parameter and its valid values for anything else. Each parameter is",
        "declared once, as a `crax.core.params.Param` in its suite's `params`.",
    ]
    for suite in BUILTIN_SUITES:
        bodies = [b.name for b in BUILTIN_BODIES if catalog.supports(suite, b)]
        summary = (suite.__doc__ or "").strip().splitlines()[0]
        parts += ["", f"## {suite.name}", "", _cell(summary), "",
                  f"Levels {', '.join(map(str, suite.levels))}; built-in bodies: {', '.join(bodies)}.", "",
                  suite_table(suite)]
    parts += ["", "## Every id", "", "Besides its suite's, every id takes these.", "", env_table(), ""]
    return "\n".join(parts)


def id_table(env_id: str) -> str:
    """``crax params ID``: each parameter of ``env_id`` with its default at the id's level, valid values
    and meaning, as aligned plain text (ValueError for an invalid id, as :func:`crax.parameters`)."""
    params = catalog.parameters(env_id)
    rows = [("parameter", "default", "valid values", "meaning")]
    rows += [(p.name, repr(p.default), p.describe(), p.doc) for p in params.values()]
    widths = [min(max(len(row[i]) for row in rows), 24) for i in range(3)]  # longer cells overflow their column
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
                     for row in rows).rstrip() + "\n"


if __name__ == "__main__":
    print(page(), end="")
