"""Reads OmniSafe's published on-policy benchmark (Table 2 of ``benchmarks/on-policy/README.md`` in
OmniSafe's repository, v0.5.0: the final episode return and cost, mean ± std over its seeds, 1e7 steps)
into ``docs/reference/omnisafe_on_policy.json``, crax's own copy that the reproduction table is read
beside. Run from the repository root with a checkout of OmniSafe's repository at the v0.5.0 tag::

    .venv/bin/python benchmarks/omnisafe/published.py --readme /path/to/omnisafe/benchmarks/on-policy/README.md
"""

from __future__ import annotations

import argparse
import html.parser
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "reference" / "omnisafe_on_policy.json"


class Tables(html.parser.HTMLParser):
    """The rows of every ``<table>``: a list of tables, each a list of rows of (cell text, colspan)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, int]]]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._span = [], int(dict(attrs).get("colspan") or 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append((" ".join("".join(self._cell).split()), self._span))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def performance_table(readme: str) -> dict[str, dict[str, dict[str, list[float]]]]:
    """``{algorithm: {env id: {"return": [mean, std], "cost": [mean, std]}}}`` of the table with id
    ``performance_on_policy`` (its header rows name the algorithms, two columns each)."""
    start = readme.index('<table id="performance_on_policy">')
    end = readme.index("</table>", start) + len("</table>")
    parser = Tables()
    parser.feed(readme[start:end])
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    algorithms: list[str] = []
    for row in parser.tables[0]:
        first = row[0][0] if row else ""
        if row and all(span == 2 for _, span in row[1:]) and len(row) > 1:
            algorithms = [text.replace(" ", "") for text, _ in row[1:]]
            continue
        if not first.startswith("Safety"):
            continue
        cells = [text for text, _ in row[1:]]
        for i, algorithm in enumerate(algorithms):
            pair = []
            for text in cells[2 * i: 2 * i + 2]:
                numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text.replace(" .", "."))]
                pair.append(numbers[:2])
            out.setdefault(algorithm, {})[first] = {"return": pair[0], "cost": pair[1]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", required=True, type=pathlib.Path)
    args = parser.parse_args()
    table = performance_table(args.readme.read_text())
    record = {"source": "OmniSafe v0.5.0, benchmarks/on-policy/README.md, Table 2 (performance_on_policy): final "
                        "episode return and cost, mean and std over seeds, 1e7 environment steps",
              "algorithms": table}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(table)} algorithms, "
          f"{sum(len(v) for v in table.values())} cells")


if __name__ == "__main__":
    main()
