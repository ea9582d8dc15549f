"""The README's result tables are generated from ``benchmarks/results/`` (never typed by hand)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_tables():
    spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "benchmarks" / "readme_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_tables_match_the_results_files():
    tables = load_tables()
    text = (ROOT / "README.md").read_text()
    names = [m.group("name") for m in tables.PATTERN.finditer(text)]
    assert "bench-envs" in names
    assert tables.rewrite(text) == text, "README tables are stale: run python benchmarks/readme_tables.py"


def test_rewrite_replaces_only_between_markers(tmp_path):
    tables = load_tables()
    text = "intro\n<!-- table:tau -->\nold\n<!-- /table:tau -->\noutro\n"
    out = tables.rewrite(text)
    assert out.startswith("intro\n<!-- table:tau -->\n| body |") and out.endswith("<!-- /table:tau -->\noutro\n")
    assert "old" not in out
