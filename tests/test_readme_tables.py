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


def test_results_history_tables_match_the_results_files():
    tables = load_tables()
    text = (ROOT / "docs" / "results_history.md").read_text()
    assert "learning-PointGoal1-before" in [m.group("name") for m in tables.PATTERN.finditer(text)]
    assert tables.rewrite(text) == text, "run python benchmarks/readme_tables.py --file docs/results_history.md"


def test_rewrite_replaces_only_between_markers(tmp_path):
    tables = load_tables()
    text = "intro\n<!-- table:tau -->\nold\n<!-- /table:tau -->\noutro\n"
    out = tables.rewrite(text)
    assert out.startswith("intro\n<!-- table:tau -->\n| body |") and out.endswith("<!-- /table:tau -->\noutro\n")
    assert "old" not in out


def test_relative_table_compares_envs_within_the_latest_sitting(tmp_path, monkeypatch):
    tables = load_tables()
    import json

    def row(env, sps, phys, sitting, n=1024):
        return {"env": env, "num_envs": n, "env_steps_per_s": sps, "physics_steps_per_s": phys, "ratio": phys / sps,
                "load_1min": 2.0, "devices": "2 cpu", "sitting": sitting}

    rows = [row("PointGoal1", 100, 120, "2026-01-01T10:00:00"), row("PointPush1", 10, 12, "2026-01-01T10:00:00"),
            row("PointGoal1", 80, 96, "2026-02-01T10:00:00"), row("PointPush1", 50, 60, "2026-02-01T10:00:00"),
            row("PointPush1", 5, 5, "2026-02-01T10:00:00", n=64)]
    (tmp_path / "bench_envs.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setattr(tables, "RESULTS", tmp_path)
    lines = tables.render("relative-PointGoal1-1024").splitlines()
    assert lines[2] == "| PointGoal1 | 80 | 1.00× | 1.00× | 1.20× |"
    assert lines[3] == "| PointPush1 | 50 | 1.60× | 1.60× | 1.20× |"  # the February sitting, N=1024 only
    assert len(lines) == 6 and lines[5].startswith("One sitting (2026-02-01 10:00 UTC, 2 cpu)")
