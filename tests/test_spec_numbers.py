"""The numbers docs/SPEC.md states for task parameters equal their one declaration (the suites'
``params``): SPEC explains the formulas, the declaration is the source of each default."""

import pathlib
import re

import pytest

import crax
from crax.suites import BUILTIN_SUITES

SPEC = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "SPEC.md").read_text()
PAPER_IDS = [i for i in crax.env_ids() if crax.parse_id(i)[1] in BUILTIN_SUITES]

STATED = re.compile(r"`?(?P<name>[a-z][a-z_]+)`?(?: α_\w+)? = \*{0,2}(?P<value>\d+(?:\.\d+)?)\*{0,2}(?P<cm> cm)?")
"""``name = value`` as SPEC writes a default (``reward_goal α_goal = 1.0``, ``press_margin = 1 cm``)."""

LEVEL_COLUMNS = {
    "Goal": {"goal radius": "goal_radius"},
    "Button": {"extents": "extent", "gremlin travel": "gremlin_travel"},
    "Circle": {"x boundary": "x_bound", "y boundary": "y_bound"},
}
"""For each suite's level table in SPEC, the columns that are declared parameters."""


def declared_defaults() -> dict[str, set[float]]:
    out: dict[str, set[float]] = {}
    for env_id in PAPER_IDS:
        for name, p in crax.parameters(env_id).items():
            if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                out.setdefault(name, set()).add(float(p.default))
    return out


def test_every_default_spec_states_is_a_declared_default():
    defaults = declared_defaults()
    stated = [(m["name"], float(m["value"]) / (100 if m["cm"] else 1)) for m in STATED.finditer(SPEC)
              if m["name"] in defaults]
    assert len(stated) >= 10, stated  # the pattern still finds SPEC's statements
    wrong = [(name, value, sorted(defaults[name])) for name, value in stated if value not in defaults[name]]
    assert not wrong, f"SPEC states defaults its declarations do not have (name, SPEC, declared): {wrong}"


def _level_table(suite: str) -> list[dict[str, str]]:
    section = SPEC.split(f"**{suite}**", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not cells[0].isdigit():
            break
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _number(cell: str) -> float | None:
    return None if cell == "none" else float(cell.lstrip("±"))


@pytest.mark.parametrize("suite", sorted(LEVEL_COLUMNS))
def test_specs_level_tables_equal_the_declared_levels(suite):
    rows = _level_table(suite)
    assert [r["level"] for r in rows] == ["1", "2", "3"]
    for row in rows:
        params = crax.parameters(f"Point{suite}{row['level']}")
        for column, name in LEVEL_COLUMNS[suite].items():
            assert _number(row[column]) == params[name].default, (suite, row["level"], column)


def test_a_wrong_spec_number_is_caught():
    defaults = declared_defaults()
    m = STATED.search("hazards cost collision_cost = 4.0 per contact")
    assert m and float(m["value"]) not in defaults[m["name"]]
