"""Reports from ``benchmarks/results/``: the generated tables of README.md and docs/*.md
(:mod:`crax.reports.pages`, drawn by :mod:`crax.reports.speed` and :mod:`crax.reports.training`), the
sample-efficiency study (:mod:`crax.reports.sample_efficiency`) and the benchmarks' shared argument
readers (:mod:`crax.reports.arguments`).

The top of crax's layers: it may import the rest of crax, and nothing in crax imports it. Importing
it changes no setting; the benchmark scripts in ``benchmarks/`` are thin command lines over it.
"""

from crax.reports.pages import PATTERN, TABLES, pages, reads, render, rewrite, stale

__all__ = ["PATTERN", "TABLES", "pages", "reads", "render", "rewrite", "stale"]
