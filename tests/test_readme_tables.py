"""The result tables of README.md and docs/*.md are generated from ``benchmarks/results/`` (never typed by
hand, :mod:`crax.reports`), and ``benchmarks/results/INDEX.md`` says which file feeds which table."""

import subprocess
import sys
from pathlib import Path

import pytest

from crax import reports
from crax.reports.arguments import parse_layout, parse_overrides
from crax.reports.pages import INDEX, read_by_pages

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


class Tables:
    """crax.reports' tables drawn from one results folder (the repository's, or a test's own)."""

    PATTERN = reports.PATTERN

    def __init__(self, results: Path = RESULTS):
        self.results = results

    def render(self, name: str) -> str:
        return reports.render(name, self.results)

    def rewrite(self, text: str) -> str:
        return reports.rewrite(text, self.results)

    @staticmethod
    def pages() -> list[Path]:
        return reports.pages(ROOT)


def test_every_page_with_tables_matches_the_results_files():
    tables = Tables()
    pages = tables.pages()
    assert ROOT / "README.md" in pages and ROOT / "docs" / "results_history.md" in pages
    assert set(ROOT.joinpath("docs").glob("*.md")) <= set(pages)
    stale = [p.relative_to(ROOT) for p in pages if tables.rewrite(p.read_text()) != p.read_text()]
    assert not stale, f"tables are stale in {stale}: run python benchmarks/readme_tables.py"


def test_the_tables_are_where_the_pages_show_them():
    tables = Tables()
    names = {p.relative_to(ROOT).as_posix(): {m.group("name") for m in tables.PATTERN.finditer(p.read_text())}
             for p in tables.pages()}
    assert "learning-PointGoal1" in names["README.md"]  # the quick start's expected return, cost and time
    assert "md-head-trust_region_sweep_76" in names["README.md"]  # the trust-region learners after decisions 76-82
    assert {"md-trust_region_sweep", "md-trust_region_sweep_76"} <= names["docs/learners.md"]  # and issue 20's
    assert "md-omnisafe_reproduction" in names["docs/results.md"]  # beside OmniSafe's published table
    assert "learning-PointGoal1-saute999" in names["docs/results_history.md"]
    assert {"results-index", "results-figures"} <= names[f"benchmarks/results/{INDEX}"]
    assert {"bench-envs", "relative-PointGoal1-1024", "gym-vector", "ceiling-1024", "xla-flags",
            "update-flops", "warp-256", "gpu-warp-4096"} <= names["docs/performance.md"]
    assert "tau" in names["docs/environments.md"]
    assert {"off-policy-layouts-PointGoal1", "off-policy-layouts-AntVelocity1"} <= names["docs/learners.md"]
    every = set().union(*names.values())
    for stem in ("sweep_bounds_PointGoal1", "curriculum_PointGoal3", "budgets_PointGoal2"):
        assert f"md-{stem}" in every
    for path in sorted(ROOT.joinpath("benchmarks", "results").glob("learning_*.json")):
        assert "learning-" + path.stem.removeprefix("learning_") in every, f"{path.name} has no table on any page"


def test_every_file_in_results_feeds_a_table_or_a_figure_of_a_page():
    """``benchmarks/results/`` keeps only what a page reads (INDEX.md lists it); superseded results leave the
    tree, their numbers stay in docs/results_history.md."""
    # runs/ is git-ignored; omnisafe_runs/ is behind omnisafe_reproduction.md; pixel_runs/ holds a run longer than a
    # sitting (benchmarks/learning.py --run-dir), whose learning_*.json the pages read when it ends
    kept_aside = {INDEX, "runs", "omnisafe_runs", "pixel_runs"}
    unread = sorted({e.name for e in RESULTS.iterdir()} - kept_aside - read_by_pages(RESULTS))
    assert not unread, f"no page reads {unread}: link it from a page, give it a table, or remove it"


def test_the_index_lists_each_tables_file_and_pages():
    index = Tables().render("results-index")
    assert "| `learning_PointGoal1.json` | `learning-PointGoal1` | README.md, docs/results.md |" in index
    assert "| `bench_envs_gpu.jsonl` | `gpu-warp-4096` | docs/performance.md |" in index
    assert "`trust_region_sweep_76/` | `md-trust_region_sweep_76` |" in index  # the runs its Markdown was drawn from
    assert "| `learning_PointGoal1.png` | README.md, docs/results.md |" in Tables().render("results-figures")
    assert reports.reads("tau") == ("tau_*.json",) and reports.reads("gpu-ceiling-4096") == ("bench_envs_gpu.jsonl",)
    with pytest.raises(ValueError, match="unknown table 'nonsense'"):
        reports.render("nonsense", RESULTS)


def test_the_command_line_checks_the_pages(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- table:tau -->\nold\n<!-- /table:tau -->\n")
    script = [sys.executable, str(ROOT / "benchmarks" / "readme_tables.py"), "--file", str(page)]
    stale = subprocess.run([*script, "--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "out of date" in stale.stderr and "old" in page.read_text()
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert "| body |" in page.read_text()
    assert subprocess.run([*script, "--check"], capture_output=True, text=True).returncode == 0


def test_rewrite_replaces_only_between_markers(tmp_path):
    tables = Tables()
    text = "intro\n<!-- table:tau -->\nold\n<!-- /table:tau -->\noutro\n"
    out = tables.rewrite(text)
    assert out.startswith("intro\n<!-- table:tau -->\n| body |") and out.endswith("<!-- /table:tau -->\noutro\n")
    assert "old" not in out


def test_md_head_keeps_the_caption_and_the_first_table_only(tmp_path, monkeypatch):
    tables = Tables()
    tables = Tables(tmp_path)
    (tmp_path / "sweep.md").write_text("Caption.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nMore:\n\n| c |\n|---|\n| 3 |\n")
    assert tables.render("md-head-sweep") == "Caption.\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    assert tables.render("md-sweep").endswith("| 3 |")
    (tmp_path / "plain.md").write_text("No table here.\n")
    with pytest.raises(ValueError, match="plain.md has no Markdown table"):
        tables.render("md-head-plain")


def test_throughput_table_shows_gradient_updates_where_every_row_has_them(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(learner, iteration_s, **extra):
        return {"learner": learner, "tag": "t", "env": "PointGoal1", "num_envs": 256, "env_steps_per_iteration": 1024,
                "iteration_s": iteration_s, "train_steps_per_s": round(1024 / iteration_s), "rollout_s": 0.1,
                "update_s": iteration_s - 0.1, "load_1min": 1.0, "device": "cpu", "date": "2026-11-30", **extra}

    tables = Tables(tmp_path)
    path = tmp_path / "throughput.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [row("sac-lag", 0.4, updates_per_s=40.0),
                                                      row("td3-lag", 0.2, updates_per_s=80.0)]) + "\n")
    lines = tables.render("throughput-t").splitlines()
    assert lines[0].startswith("| learner | iteration (s) | relative to sac-lag | env steps/s | gradient updates/s |")
    assert lines[3] == "| td3-lag | 0.20 | 0.50× | 5,120 | 80.0 | 0.10 | 0.10 | 1.0 |"
    with open(path, "a") as f:
        f.write(json.dumps(row("ppo-lag", 0.8)) + "\n")  # no gradient-step count: the column goes
    assert "gradient updates/s" not in tables.render("throughput-t")


def test_throughput_table_names_the_critic_chunk_where_a_learners_rows_differ_in_it(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(learner, iteration_s, chunk):
        return {"learner": learner, "tag": "c", "env": "PointGoal1", "num_envs": 2048, "env_steps_per_iteration": 1024,
                "iteration_s": iteration_s, "train_steps_per_s": round(1024 / iteration_s), "rollout_s": 0.1,
                "update_s": iteration_s - 0.1, "load_1min": 1.0, "device": "cpu", "critic_chunk_rows": chunk}

    tables = Tables(tmp_path)
    rows = [row("ppo-lag", 0.5, 8192), row("ppo-lag", 0.4, 1024), row("cpo", 0.6, 1024)]
    (tmp_path / "throughput.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    lines = tables.render("throughput-c").splitlines()
    assert lines[0].startswith("| learner | iteration (s) | relative to ppo-lag (critic chunk 8,192 rows) |")
    assert lines[3].startswith("| ppo-lag (critic chunk 1,024 rows) | 0.40 | 0.80× |")
    assert lines[4].startswith("| cpo | 0.60 | 1.20× |")  # one chunk among cpo's rows: no label


def test_update_flops_table_shows_the_latest_days_rows(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(learner, date, gflops):
        return {"env": "PointGoal1", "learner": learner, "minibatch": 8192, "critic_hidden": [256] * 5,
                "step_gflop": 30.0, "step_ms": 30000 / gflops, "step_gflops_per_s": gflops, "matmul_n": 2048,
                "peak_gflops_per_s": 100.0, "shaped_gflops_per_s": 90.0, "fraction_of_peak": gflops / 100,
                "devices": "1 cpu", "cpu": "EPYC", "cpu_count": 2, "load_1min": 0.5, "date": date}

    tables = Tables(tmp_path)
    assert tables.render("update-flops").startswith("No sitting has measured the update yet")
    timed_loop = {"critic_chunk": 1024, "whole_minibatch_step_ms": 600.0, "whole_minibatch_fraction_of_peak": 0.5,
                  "timed": "update scan"}  # session 33's rows: the update's loop, chunked and whole
    rows = [row("ppo-lag", "2026-11-01", 20.0), row("ppo", "2026-11-30", 50.0),
            {**row("ppo-lag", "2026-11-30", 60.0), **timed_loop}]
    (tmp_path / "update_flops.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    lines = tables.render("update-flops").splitlines()
    assert lines[2].startswith("| ppo | PointGoal1 | 8,192 | 5×256 | 8,192 rows | 30.0 | 600.0 | 50.0 |")
    assert lines[2].endswith("| 0.50 | – | 0.5 |")  # a lone step's row: the whole minibatch, no second timing
    assert lines[3] == ("| ppo-lag | PointGoal1 | 8,192 | 5×256 | 1,024 rows | 30.0 | 500.0 | 60.0 | 100.0 | 90.0 | "
                        "0.60 | 600.0, 0.50 | 0.5 |")
    assert len(lines) == 6  # the older day's row is left out
    assert lines[5].startswith("2026-11-30, EPYC (2 cores), 1 cpu; peak: a 2048×2048 f32 matmul")
    assert lines[5].endswith("a step: the update's loop over one epoch's minibatches, divided by them.")


def test_relative_table_compares_envs_within_the_latest_sitting(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(env, sps, phys, sitting, n=1024):
        return {"env": env, "num_envs": n, "env_steps_per_s": sps, "physics_steps_per_s": phys, "ratio": phys / sps,
                "load_1min": 2.0, "devices": "2 cpu", "sitting": sitting}

    rows = [row("PointGoal1", 100, 120, "2026-01-01T10:00:00"), row("PointPush1", 10, 12, "2026-01-01T10:00:00"),
            row("PointGoal1", 80, 96, "2026-02-01T10:00:00"), row("PointPush1", 50, 60, "2026-02-01T10:00:00"),
            row("PointPush1", 5, 5, "2026-02-01T10:00:00", n=64)]
    (tmp_path / "bench_envs.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    tables = Tables(tmp_path)
    lines = tables.render("relative-PointGoal1-1024").splitlines()
    assert lines[2] == "| PointGoal1 | 80 | 1.00× | 1.00× | 1.20× |"
    assert lines[3] == "| PointPush1 | 50 | 1.60× | 1.60× | 1.20× |"  # the February sitting, N=1024 only
    assert len(lines) == 6 and lines[5].startswith("One sitting (2026-02-01 10:00 UTC, 2 cpu)")


def test_ceiling_table_shows_the_latest_sitting_that_measured_the_ceiling(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(env, body, sitting, ceiling=None, n=1024):
        r = {"env": env, "body": body, "num_envs": n, "env_steps_per_s": 1000, "physics_steps_per_s": 1100, "ratio": 1.1,
             "load_1min": 1.5, "devices": "2 cpu", "sitting": sitting}
        if ceiling:
            r.update(ceiling_steps_per_s=ceiling, ceiling_ratio=1000 / ceiling, ceiling_threads=2, ceiling_stopped=0)
        return r

    tables = Tables(tmp_path)
    (tmp_path / "bench_envs.jsonl").write_text(json.dumps(row("PointGoal1", "Point", "2026-01-01T10:00:00")) + "\n")
    none = tables.render("ceiling-1024")
    assert none.startswith("No sitting in `bench_envs.jsonl` has measured the C MuJoCo ceiling at N=1024 yet")
    assert "python benchmarks/bench_envs.py --envs PointGoal1" in none and "--num-envs 1024" in none
    assert tables.render("gpu-ceiling-1024").startswith("No sitting in `bench_envs_gpu.jsonl`")  # no such file here
    rows = [row("PointGoal1", "Point", "2026-01-01T10:00:00", ceiling=400),
            row("AntGoal1", "Ant", "2026-02-01T10:00:00", ceiling=2000), row("PointGoal1", "Point", "2026-02-01T10:00:00", ceiling=500),
            row("PointGoal1", "Point", "2026-02-01T10:00:00", ceiling=800, n=64),
            row("PointGoal1", "Point", "2026-03-01T10:00:00")]  # a later sitting without the ceiling (--no-ceiling)
    (tmp_path / "bench_envs.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    lines = tables.render("ceiling-1024").splitlines()
    assert lines[0] == "| body | env (N=1024) | crax env steps/s | C MuJoCo env steps/s | crax / C MuJoCo |"
    assert lines[2:4] == ["| Ant | AntGoal1 | 1,000 | 2,000 | 0.50× |", "| Point | PointGoal1 | 1,000 | 500 | 2.00× |"]
    assert lines[5] == "One sitting (2026-02-01 10:00 UTC, crax on 2 cpu, C MuJoCo on 2 CPU threads), load 1.5–1.5."
    bench = tables.render("bench-envs").splitlines()  # rows with and without the ceiling fields alike
    assert any(line.startswith("| Point | PointGoal1 | 1,000 |") for line in bench)


def test_warp_table_sets_the_two_implementations_of_one_sitting_side_by_side(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(env, body, sitting, sps, physics=None, n=256, devices="2 cpu"):
        r = {"env": env, "body": body, "num_envs": n, "env_steps_per_s": sps, "physics_steps_per_s": sps * 1.1,
             "ratio": 1.1, "load_1min": 1.5, "devices": devices, "sitting": sitting, "cpu": "AMD EPYC (avx512)"}
        return r if physics is None else {**r, "physics": physics}

    tables = Tables(tmp_path)
    old = [row("PointCircle1", "Point", "2026-01-01T10:00:00", 5000)]  # rows from before --physics are JAX rows
    (tmp_path / "bench_envs.jsonl").write_text("\n".join(json.dumps(r) for r in old) + "\n")
    none = tables.render("warp-256")
    assert none.startswith("No sitting in `bench_envs.jsonl` has measured `physics=\"warp\"` at N=256 yet")
    assert "--physics jax warp" in none and "--out" not in none
    assert "--out benchmarks/results/bench_envs_gpu.jsonl" in tables.render("gpu-warp-4096")  # no such file here
    rows = [*old, row("PointCircle1", "Point", "2026-02-01T10:00:00", 8000, "jax"),
            row("PointCircle1", "Point", "2026-02-01T10:00:00", 2000, "warp", devices="1 cpu"),
            row("AntVelocity1", "Ant", "2026-02-01T10:00:00", 300, "warp", devices="1 cpu"),  # its JAX row is at 64 only
            row("AntVelocity1", "Ant", "2026-02-01T10:00:00", 900, "jax", n=64)]
    (tmp_path / "bench_envs.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    lines = tables.render("warp-256").splitlines()
    assert lines[0] == ("| body | env (N=256) | JAX env steps/s | Warp env steps/s | Warp / JAX | env/physics JAX | "
                        "env/physics Warp |")
    assert lines[2:4] == ["| Ant | AntVelocity1 | – | 300 | – | – | 1.10× |",
                          "| Point | PointCircle1 | 8,000 | 2,000 | 0.25× | 1.10× | 1.10× |"]
    assert lines[5] == ("One sitting (2026-02-01 10:00 UTC, AMD EPYC (avx512); Warp on 1 cpu, JAX on 2 cpu), "
                        "load 1.5–1.5.")
    bench = tables.render("bench-envs")  # the JAX implementation's rows only
    assert "| Point | PointCircle1 | – | 8,000 |" in bench and "| Ant | AntVelocity1 | 900 | – |" in bench
    assert "2,000" not in bench and "| 300 |" not in bench


def test_off_policy_layouts_table_shows_the_latest_sitting_on_its_env(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def row(env, layout, ret, cost, sitting):
        e, u, n, b = map(int, layout.split("x"))
        return {"env": env, "learner": "sac-lag", "layout": layout, "num_envs": e, "unroll_length": u,
                "updates_per_iteration": n, "batch_size": b, "replay_ratio": n * b / (e * u), "num_seeds": 2,
                "budget_s": 240.0, "env_steps": 1000 * e, "steps_per_s": 20 * e, "return": ret, "cost": cost,
                "safety_bound": 25.0, "eval_policy": "stochastic", "cpu": "cpu", "cpu_count": 2, "load_1min": 1.25,
                "sitting": sitting}

    tables = Tables(tmp_path)
    assert tables.render("off-policy-layouts-PointGoal1").startswith("No sitting on PointGoal1")  # no file yet
    rows = [row("PointGoal1", "64x4x8x512", [1.0, 3.0], [10.0, 30.0], "2026-01-01T10:00:00"),
            row("PointGoal1", "256x4x8x512", [5.0, 7.0], [0.0, 2.0], "2026-02-01T10:00:00"),
            row("AntVelocity1", "256x4x8x512", [100.0, 100.0], [0.0, 0.0], "2026-03-01T10:00:00")]
    (tmp_path / "off_policy_layouts.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    lines = tables.render("off-policy-layouts-PointGoal1").splitlines()
    assert lines[2] == "| 256 × 4 | 8 × 512 | 4 | 5,120 | 256,000 | 6.0 (5.0–7.0) | 1.0 (0.0–2.0) |"
    assert len(lines) == 5 and lines[4].startswith("`sac-lag` on PointGoal1, one sitting (2026-02-01 10:00 UTC, cpu, 2 cores")
    assert "240 s of training per layout" in lines[4] and "the bound is 25" in lines[4]


def test_off_policy_layouts_refuses_a_malformed_layout():
    assert parse_layout("256x4x8x512") == {"num_envs": 256, "unroll_length": 4, "updates_per_iteration": 8,
                                           "batch_size": 512}
    for bad in ("256x4x8", "256x0x8x512", "256x4xeightx512"):
        with pytest.raises(SystemExit, match="is not ENVSxUNROLLxUPDATESxBATCH"):
            parse_layout(bad)
    from crax.learners import SACLag

    assert parse_overrides(("init_alpha=0.01", "n_step=3"), SACLag.Config) == {"init_alpha": 0.01, "n_step": 3}
    with pytest.raises(SystemExit, match="'alpha=1': not FIELD=VALUE with a field of SACLagConfig; its fields: .*init_alpha"):
        parse_overrides(("alpha=1",), SACLag.Config)


def test_sg_transfer_table_counts_cost_free_episodes_and_the_engines_difference(tmp_path, monkeypatch):
    tables = Tables()
    import json

    def engine(returns, costs):
        def summary(v):
            return {"mean": sum(v) / len(v), "ci95": 0.5, "median": sorted(v)[len(v) // 2], "episodes": len(v),
                    "per_episode": v}
        return {"return": summary(returns), "cost": summary(costs)}

    data = {"env": "SafetyPointGoal1-v0", "learner": "ppo-lag", "env_steps": 2_000_000,
            "crax": engine([10.0, 12.0, 14.0, 16.0], [0.0, 0.0, 4.0, 8.0]),
            "safety_gymnasium": {"version": "1.0.0", **engine([11.0, 13.0, 15.0, 17.0], [0.0, 2.0, 4.0, 10.0])}}
    tables = Tables(tmp_path)
    (tmp_path / "sg_policy_transfer.json").write_text(json.dumps(data))
    lines = tables.render("sg-transfer").splitlines()
    assert lines[2] == "| crax | 4 | 13.0 ± 0.5 | 3.0 ± 0.5 | 4.0 | 8 | 2 |"
    assert lines[3] == "| Safety-Gymnasium 1.0.0 | 4 | 14.0 ± 0.5 | 4.0 ± 0.5 | 4.0 | 10 | 1 |"
    # return: variances 6.67 and 6.67, 1.96 * sqrt((6.67 + 6.67) / 4) = 3.58; cost: 14.67 and 18.67 -> 5.66
    assert "Safety-Gymnasium's mean minus crax's: return +1.0 ± 3.6, cost +1.0 ± 5.7 (95%)." in lines[5]
    # four episodes an engine, a largest gap of 1/4 between the empirical CDFs: p = 1.0 for both
    assert lines[5].endswith("Two-sample Kolmogorov-Smirnov test of the episodes: p = 1.00 (returns), 1.00 (costs).")


def test_sg_speed_table_shows_each_vision_image_size_in_its_own_block(tmp_path):
    import json

    common = {"sg_steps": 500, "sg_resets": 0, "safety_gymnasium": "1.0.0", "crax_budget": [10, 10], "cpu_count": 2,
              "machine": "x86_64", "cpu": "AMD EPYC (avx512)", "date": "2026-12-02"}
    rows = [{**common, "id": "SafetyPointGoal1-v0", "sg_steps_per_s": 800, "crax_steps_per_s": {"1024": 8000},
             "load_1min": [1.0, 2.0], "sitting": "2026-12-02T10:00:00+00:00"},
            {**common, "id": "SafetyPointGoal1Vision-v0", "vision_size": 64, "sg_renderer": "llvmpipe",
             "sg_steps_per_s": 50, "crax_steps_per_s": {"1": 400, "16": 2000}, "load_1min": [3.0, 4.0],
             "sitting": "2026-12-02T11:00:00+00:00"},
            {**common, "id": "SafetyPointGoal1Vision-v0", "vision_size": 256, "sg_renderer": "llvmpipe",
             "sg_steps_per_s": 25, "crax_steps_per_s": {"1": 40, "16": 100}, "load_1min": [3.0, 4.5],
             "sitting": "2026-12-02T12:00:00+00:00"}]
    (tmp_path / "sg_speed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = Tables(tmp_path).render("sg-speed").splitlines()
    assert lines[2] == "| SafetyPointGoal1-v0 | 800 | 8,000 | 10× | 5× | A |"  # the state-based block as before
    assert lines[4].startswith("| Vision id (image) | Safety-Gymnasium steps/s (1 env, 1 core) | crax steps/s N=1 | "
                               "crax steps/s N=16 |")
    assert lines[6] == "| SafetyPointGoal1Vision-v0 (64×64) | 50 | 400 | 2,000 | 40× | 20× | B |"
    assert lines[7] == "| SafetyPointGoal1Vision-v0 (256×256) | 25 | 40 | 100 | 4× | 2× | C |"
    assert lines[-1].endswith("Safety-Gymnasium's drawn by llvmpipe; its \"on all cores\" is crax's steps/s per core "
                              "over Safety-Gymnasium's per core.")
