"""The generated tables of README.md, docs/*.md and ``benchmarks/results/INDEX.md``: which results
file each table reads, how it is drawn, and rewriting a page between its markers.

Each generated table sits between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` in a page;
everything between the markers is replaced, and the same table may appear on several pages. Tables
are never typed by hand. :data:`TABLES` names every kind of table, the results files it reads and
how it is drawn; ``benchmarks/results/INDEX.md`` lists them against the pages (its own tables,
``results-index`` and ``results-figures``, are drawn from the other pages' markers and figure links).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from crax.reports import speed, training
from crax.reports.rows import first_table

RESULTS = Path("benchmarks", "results")
"""Where the files the tables read are, relative to the repository root."""
INDEX = "INDEX.md"
"""The page in ``benchmarks/results/`` that says which file feeds which table on which page."""

PATTERN = re.compile(r"(<!-- table:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table:(?P=name) -->)", re.S)
"""A generated table in a page: its opening marker, its body and its closing marker."""
FIGURE = re.compile(r"benchmarks/results/(?P<file>[\w.-]+\.(?:png|svg|gif))")
"""A page's link to a figure in ``benchmarks/results/``."""


@dataclasses.dataclass(frozen=True)
class Table:
    """One kind of generated table: the names it answers to (a regular expression matched against the
    whole marker name), the results files it reads (names or glob patterns relative to
    ``benchmarks/results/``), how it is drawn from a results folder, and what it shows (INDEX.md's words)."""

    name: str
    reads: Callable[[re.Match], tuple[str, ...]]
    draw: Callable[[Path, re.Match], str]
    described: str


def _bench(match: re.Match) -> str:
    return "bench_envs_gpu.jsonl" if match.group("gpu") else "bench_envs.jsonl"


def _md_reads(match: re.Match) -> tuple[str, ...]:
    """The Markdown file, and where kept, what it was drawn from: the ``.json`` and ``.csv`` that the same
    command wrote with it (``crax table --out``, ``budgets.py``, ``compare_runs.py``) and its runs' folder."""
    return tuple(f"{match['stem']}{end}" for end in (".md", ".json", ".csv", "/"))


TABLES: tuple[Table, ...] = (
    Table("bench-envs", lambda m: ("bench_envs.jsonl",), lambda r, m: speed.bench_envs_table(r),
          "latest row per env id and N: env steps/s and the ratio to bare physics"),
    Table(r"(?P<gpu>gpu-)?relative-(?P<base>.+)-(?P<n>\d+)", lambda m: (_bench(m),),
          lambda r, m: speed.relative_table(r, m["base"], int(m["n"]), _bench(m)),
          "the latest sitting that measured BASE at N envs: every env of it relative to BASE"),
    Table(r"(?P<gpu>gpu-)?ceiling-(?P<n>\d+)", lambda m: (_bench(m),),
          lambda r, m: speed.ceiling_table(r, int(m["n"]), _bench(m)),
          "the latest sitting with C MuJoCo ceiling rows at N envs: crax against C MuJoCo"),
    Table(r"(?P<gpu>gpu-)?warp-(?P<n>\d+)", lambda m: (_bench(m),), lambda r, m: speed.warp_table(r, int(m["n"]), _bench(m)),
          "the latest sitting with Warp rows at N envs: MJX's JAX and Warp implementations side by side"),
    Table("gym-vector", lambda m: ("gym_vector.jsonl",), lambda r, m: speed.gym_vector_table(r),
          "Gymnasium's vector face against crax's native steps/s"),
    Table("sg-speed", lambda m: ("sg_speed.jsonl",), lambda r, m: speed.sg_speed_table(r),
          "Safety-Gymnasium's own steps/s against crax's for the same ids"),
    Table("xla-flags", lambda m: ("xla_flags.jsonl",), lambda r, m: speed.xla_flags_table(r),
          "env and training steps/s under each XLA flag set against XLA's defaults"),
    Table(r"throughput-(?P<tag>.+)", lambda m: ("throughput.jsonl",), lambda r, m: training.throughput_table(r, m["tag"]),
          "rows tagged TAG: each learner's iteration time against the first row's"),
    Table("update-flops", lambda m: ("update_flops.jsonl",), lambda r, m: training.update_flops_table(r),
          "one PPO minibatch step's FLOP/s against a matmul peak in the same process"),
    Table("tau", lambda m: ("tau_*.json",), lambda r, m: training.tau_table(r), "each body's measured τ"),
    Table(r"learning-(?P<env>.+)", lambda m: (f"learning_{m['env']}.json",),
          lambda r, m: training.learning_table(r, m["env"]), "benchmarks/learning.py's final evaluation of each learner"),
    Table(r"sample-efficiency-(?P<env>.+)", lambda m: (f"sample_efficiency_{m['env']}.json",),
          lambda r, m: training.sample_efficiency_table(r, m["env"]),
          "each learner's final return and cost and where it reached the reference"),
    Table("cpo-step-check", lambda m: ("cpo_step_check*.json",), lambda r, m: training.cpo_step_check_table(r),
          "CPO's predicted cost change of its steps against the change measured in rollouts"),
    Table("cpo-constraint-value", lambda m: ("cpo_constraint_value/", "trust_region_sweep/tr-*-cpo/"),
          lambda r, m: training.cpo_constraint_value_table(r), "CPO's runs' final return and cost per constraint value"),
    Table(r"off-policy-layouts-(?P<env>.+)", lambda m: ("off_policy_layouts.jsonl",),
          lambda r, m: training.off_policy_layouts_table(r, m["env"]),
          "the latest sitting on ENV: each layout's steps/s, return and cost after one training budget"),
    Table("sg-transfer", lambda m: ("sg_policy_transfer.json",), lambda r, m: training.sg_transfer_table(r),
          "one crax policy's episodes in crax and in Safety-Gymnasium"),
    Table(r"md-head-(?P<stem>.+)", _md_reads, lambda r, m: first_table(r / f"{m['stem']}.md"),
          "the file's caption and first table as written (crax table's Markdown)"),
    Table(r"md-(?P<stem>.+)", _md_reads, lambda r, m: (r / f"{m['stem']}.md").read_text().rstrip("\n"),
          "the file as written (crax table's or a benchmark's Markdown)"),
    Table("results-index", lambda m: (), lambda r, m: index_table(r),
          "INDEX.md's own: which file feeds which table on which page"),
    Table("results-figures", lambda m: (), lambda r, m: figures_table(r), "INDEX.md's own: the figures the pages show"),
)
"""Every kind of generated table, tried in this order (``md-head-`` before ``md-``)."""


def table_for(name: str) -> tuple[Table, re.Match]:
    """The kind of table a marker name asks for, with the name's parts."""
    for table in TABLES:
        if match := re.fullmatch(table.name, name):
            return table, match
    raise ValueError(f"unknown table {name!r}; valid: " + ", ".join(t.name for t in TABLES))


def render(name: str, results: Path) -> str:
    """The body of table ``name`` drawn from the files in ``results``."""
    table, match = table_for(name)
    return table.draw(results, match)


def reads(name: str) -> tuple[str, ...]:
    """The results files (names or glob patterns relative to ``benchmarks/results/``) table ``name`` reads."""
    table, match = table_for(name)
    return table.reads(match)


def rewrite(text: str, results: Path) -> str:
    """``text`` with every generated table drawn anew from ``results``; nothing outside the markers changes."""
    return PATTERN.sub(lambda m: m.group(1) + render(m.group("name"), results) + "\n" + m.group(4), text)


def pages(root: Path) -> list[Path]:
    """Every page whose tables the generator fills: README.md, the Markdown pages of docs/ and
    ``benchmarks/results/INDEX.md``."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), root / RESULTS / INDEX]


def _root(results: Path) -> Path:
    return results.parents[len(RESULTS.parts) - 1]


def _found(root: Path, pattern: re.Pattern, group: str) -> dict[str, list[str]]:
    """Each match of ``pattern``'s ``group`` on the pages (INDEX.md aside), with the pages it is on."""
    out: dict[str, list[str]] = {}
    for page in pages(root):
        if page.name == INDEX or not page.exists():
            continue
        for m in pattern.finditer(page.read_text()):
            where = out.setdefault(m.group(group), [])
            if (name := page.relative_to(root).as_posix()) not in where:
                where.append(name)
    return out


def table_pages(root: Path) -> dict[str, list[str]]:
    """Every generated table's name, with the pages (relative to ``root``) that show it, in page order."""
    return _found(root, PATTERN, "name")


def figure_pages(root: Path) -> dict[str, list[str]]:
    """Every figure in ``benchmarks/results/`` a page links to or names, with the pages that do."""
    return _found(root, FIGURE, "file")


def index_table(results: Path) -> str:
    """``benchmarks/results/``'s files against the tables they feed and the pages that show them."""
    lines = ["| file | table | pages | what the table shows |", "|---|---|---|---|"]
    rows = []
    for name, where in table_pages(_root(results)).items():
        table, match = table_for(name)
        for source in table.reads(match):
            present = any(results.glob(source.rstrip("/")))
            drawn_from = name.startswith("md-") and not source.endswith(".md")
            if drawn_from and not present:
                continue  # what the Markdown was drawn from, where it is kept
            what = f"what `{reads(name)[0]}` was drawn from" if drawn_from else table.described
            rows.append((source, name, f"`{source}`" + ("" if present else " (not written yet)"), ", ".join(where), what))
    lines += [f"| {file} | `{name}` | {where} | {what} |" for _, name, file, where, what in sorted(rows)]
    return "\n".join(lines)


def figures_table(results: Path) -> str:
    """The figures in ``benchmarks/results/`` that the pages show, and where."""
    lines = ["| figure | pages |", "|---|---|"]
    lines += [f"| `{file}` | {', '.join(where)} |" for file, where in sorted(figure_pages(_root(results)).items())]
    return "\n".join(lines)


def read_by_pages(results: Path) -> set[str]:
    """The entries of ``results`` (file and folder names at its top) that a page's table or figure reads."""
    root = _root(results)
    patterns = [p.rstrip("/").split("/")[0] for name in table_pages(root) for p in reads(name)]
    found = {e.name for e in results.iterdir() if any(e.match(p) for p in patterns)}
    return found | set(figure_pages(root))


def stale(paths: list[Path], results: Path) -> list[Path]:
    """The pages among ``paths`` whose generated tables differ from what ``results`` holds now."""
    return [p for p in paths if rewrite(p.read_text(), results) != p.read_text()]
