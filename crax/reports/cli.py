"""The command line of ``python benchmarks/readme_tables.py``: rewrite the pages' generated tables, or
check that they are up to date."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crax.reports.pages import RESULTS, pages, rewrite, stale


def main(root: Path, argv: list[str] | None = None) -> None:
    """Rewrites the tables of the pages under ``root`` (the repository) from ``root/benchmarks/results``;
    ``--check`` leaves them and exits 1 if any is out of date, ``--file PAGE`` limits it to the pages named."""
    parser = argparse.ArgumentParser(description="Regenerates the result tables of README.md, docs/*.md and "
                                     "benchmarks/results/INDEX.md from the files in benchmarks/results/.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not up to date")
    parser.add_argument("--file", type=Path, action="append",
                        help="a Markdown page to rewrite (repeatable); default: README.md, docs/*.md and "
                             "benchmarks/results/INDEX.md")
    args = parser.parse_args(argv)
    results = root / RESULTS
    paths = args.file or pages(root)
    if args.check:
        if out_of_date := stale(paths, results):
            print("out of date: " + ", ".join(str(p) for p in out_of_date) + "; run python benchmarks/readme_tables.py",
                  file=sys.stderr)
            raise SystemExit(1)
        return
    for path in paths:
        old = path.read_text()
        if (new := rewrite(old, results)) != old:
            path.write_text(new)
