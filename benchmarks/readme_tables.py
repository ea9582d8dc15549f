"""Regenerates the result tables of README.md, docs/*.md and benchmarks/results/INDEX.md from the files
in ``benchmarks/results/`` (:mod:`crax.reports`).

Usage::

    python benchmarks/readme_tables.py                            # rewrite the pages in place
    python benchmarks/readme_tables.py --check                    # exit 1 if any of them is out of date
    python benchmarks/readme_tables.py --file docs/results.md     # only the pages named (repeatable)

Each generated table sits between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` in a page;
everything between the markers is replaced. Which file each kind of table reads is
``crax.reports.pages.TABLES``; ``benchmarks/results/INDEX.md`` lists every table of every page with
its file.
"""

from pathlib import Path

from crax.reports.cli import main

if __name__ == "__main__":
    main(Path(__file__).resolve().parent.parent)
