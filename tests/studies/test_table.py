"""The summary table on hand-made results: intervals, safe, win, per-learner wins and safe %, files."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from crax.studies import summary_table, to_markdown
from tests.studies.runs import write_run

T_975_2 = 4.302652729911275  # Student t quantile 0.975 with 2 degrees of freedom


@pytest.fixture
def study(tmp_path):
    """Two levels of PointGoal, three learners that read the bound; the PointGoal1 ppo-lag cell is
    split over two runs."""
    root = tmp_path / "study"
    write_run(root / "a", "p3o", "PointGoal1", 25, [10, 12, 14], [40, 50, 60])          # unsafe
    write_run(root / "b", "ppo-lag", "PointGoal1", 25, [8, 9], [20, 22])                # safe, win
    write_run(root / "b2", "ppo-lag", "PointGoal1", 25, [10], [24])                     # (same cell)
    write_run(root / "c", "ppo-pid", "PointGoal1", 25, [7, 7], [24, 26])                # C = d: not safe
    write_run(root / "d", "ppo-lag", "PointGoal1", 15, [3, 3, 3], [16, 16, 16])         # unsafe; nobody wins
    write_run(root / "e", "p3o", "PointGoal2", 25, [5], [10])                           # one seed; tie win
    write_run(root / "f", "ppo-lag", "PointGoal2", 25, [4, 6], [30, 10])                # tie win
    write_run(root / "g", "p3o", "PointGoal2", 25)                                      # unfinished
    return root


def cell(summary, learner, env, bound):
    (found,) = [c for c in summary.cells if (c.learner, c.env, c.safety_bound) == (learner, env, bound)]
    return found


def test_cells_have_student_t_intervals_safe_and_win(study):
    s = summary_table([study], reps=200)
    lag = cell(s, "ppo-lag", "PointGoal1", 25)
    assert lag.seeds == 3 and lag.level == 1 and len(lag.runs) == 2  # seeds pooled over both runs
    assert lag.return_mean == 9.0 and lag.cost_mean == 22.0
    assert lag.return_ci == pytest.approx((9 - T_975_2 / math.sqrt(3), 9 + T_975_2 / math.sqrt(3)))
    assert lag.cost_ci == pytest.approx((22 - 2 * T_975_2 / math.sqrt(3), 22 + 2 * T_975_2 / math.sqrt(3)))
    assert lag.safe and lag.win
    ppo = cell(s, "p3o", "PointGoal1", 25)
    assert (ppo.return_mean, ppo.cost_mean, ppo.safe, ppo.win) == (12.0, 50.0, False, False)  # best R, but unsafe
    pid = cell(s, "ppo-pid", "PointGoal1", 25)
    assert pid.cost_mean == 25.0 and not pid.safe and not pid.win
    lone = cell(s, "ppo-lag", "PointGoal1", 15)
    assert not lone.safe and not lone.win
    one_seed = cell(s, "p3o", "PointGoal2", 25)
    assert one_seed.seeds == 1 and one_seed.return_ci is None and one_seed.cost_ci is None
    assert one_seed.win and cell(s, "ppo-lag", "PointGoal2", 25).win  # equal mean R 5: both win
    assert s.skipped == [str((study / "g").resolve())]


def test_per_learner_wins_and_safe_per_level(study):
    s = summary_table([study], reps=200)
    rows = {r.learner: r for r in s.learners}
    assert rows["p3o"].levels == {1: {"cells": 1, "wins": 0, "safe": 0}, 2: {"cells": 1, "wins": 1, "safe": 1}}
    assert rows["p3o"].total == {"cells": 2, "wins": 1, "safe": 1}
    assert rows["ppo-lag"].levels == {1: {"cells": 2, "wins": 1, "safe": 1}, 2: {"cells": 1, "wins": 1, "safe": 1}}
    assert rows["ppo-lag"].total == {"cells": 3, "wins": 2, "safe": 2}
    assert rows["ppo-pid"].levels == {1: {"cells": 1, "wins": 0, "safe": 0}}
    md = to_markdown(s)
    assert "| learner | L1 wins | L1 safe % | L2 wins | L2 safe % | total wins | total safe % |" in md
    assert "| ppo-lag | 1 | 50 | 1 | 100 | 2 | 67 |" in md
    assert "| ppo-pid | 0 | 0 |  |  | 0 | 0 |" in md
    assert "| ppo-lag | PointGoal1 | 1 | 25 | 3 | 9.00 ± 2.48 | 22.00 ± 4.97 | yes | win |" in md
    assert "| p3o | PointGoal2 | 2 | 25 | 1 | 5.00 | 10.00 | yes | win |" in md
    assert "Cells with one seed have no interval." in md


def test_iqm_and_probability_of_improvement(study):
    s = summary_table([study], reps=200)
    # PointGoal2/25 normalises over returns {5, 4, 6}: ppo 0.5; ppo-lag 0, 1.
    # PointGoal1/25 over {10, 12, 14, 8, 9, 10, 7, 7} (min 7, max 14): ppo 3/7, 5/7, 1.
    assert s.iqm_return["p3o"]["tasks"] == 2 and s.iqm_return["p3o"]["runs"] == 4
    assert s.iqm_return["p3o"]["iqm"] == pytest.approx((0.5 + 5 / 7) / 2)  # IQM of {3/7, 0.5, 5/7, 1}
    assert s.iqm_cost["p3o"]["iqm"] == pytest.approx((1.6 + 2.0) / 2)  # C/d: {0.4, 1.6, 2.0, 2.4}
    lo, hi = s.iqm_return["p3o"]["ci"]
    assert lo <= s.iqm_return["p3o"]["iqm"] <= hi
    pairs = {(p["x"], p["y"]): p for p in s.improvement}
    # ppo vs ppo-lag on PointGoal1/25 ({10, 12, 14} vs {8, 9, 10}: 8 wins and a tie of 9 pairs) and
    # PointGoal2/25 (5 vs {4, 6}: ½); PointGoal1/15 has no ppo run
    assert pairs["p3o", "ppo-lag"]["p"] == pytest.approx((8.5 / 9 + 0.5) / 2) and pairs["p3o", "ppo-lag"]["tasks"] == 2
    assert pairs["ppo-lag", "p3o"]["p"] == pytest.approx((0.5 / 9 + 0.5) / 2)
    assert pairs["ppo-pid", "p3o"]["tasks"] == 1 and pairs["ppo-pid", "p3o"]["p"] == 0.0


def test_files_and_policy_choice(study, tmp_path):
    prefix = tmp_path / "out" / "table"
    s = summary_table([study / "b", study / "b2", study / "a"], prefix, reps=100)
    assert {c.learner for c in s.cells} == {"p3o", "ppo-lag"}
    rows = list(csv.DictReader(open(f"{prefix}.csv")))
    assert [(r["learner"], r["seeds"], r["safe"], r["win"]) for r in rows] == [("p3o", "3", "False", "False"),
                                                                              ("ppo-lag", "3", "True", "True")]
    assert float(rows[1]["return_ci_low"]) == pytest.approx(9 - T_975_2 / math.sqrt(3))
    data = json.loads((tmp_path / "out" / "table.json").read_text())
    assert data["learners"]["ppo-lag"]["total"] == {"cells": 1, "wins": 1, "safe": 1}
    assert data["cells"][1]["return_ci"] == pytest.approx([9 - T_975_2 / math.sqrt(3), 9 + T_975_2 / math.sqrt(3)])
    # run folders named relative to the files' folder (they move with it), the returned summary's absolute
    assert [Path(r).is_absolute() for c in s.cells for r in c.runs] == [True] * sum(len(c.runs) for c in s.cells)
    for row, cell in zip(data["cells"], s.cells, strict=True):
        assert row["runs"] and [(tmp_path / "out" / r).resolve() for r in row["runs"]] == [Path(r) for r in cell.runs]
        assert not any(Path(r).is_absolute() for r in row["runs"])
    assert (tmp_path / "out" / "table.md").read_text() == to_markdown(s)
    det = summary_table([study / "b"], policy="deterministic", reps=10)
    assert det.cells[0].return_mean == 108.5 and det.cells[0].cost_mean == 121.0 and det.policy == "deterministic"


def test_a_bound_free_run_counts_at_every_bound_of_its_env(tmp_path):
    root = tmp_path / "sweep"
    write_run(root / "ppo", "ppo", "PointGoal1", 15, [10, 12], [20, 30])  # one run: C 25
    for d in (15, 30):
        write_run(root / f"lag{d}", "ppo-lag", "PointGoal1", d, [5, 7], [d - 2, d - 4])
    write_run(root / "cost2", "ppo-cost", "PointGoal2", 25, [1], [1])  # no bound-reading run: stays at 25
    s = summary_table([root], reps=50)
    assert [(c.learner, c.safety_bound) for c in s.cells if c.env == "PointGoal1"] == [
        ("ppo", 15.0), ("ppo-lag", 15.0), ("ppo", 30.0), ("ppo-lag", 30.0)]
    assert not cell(s, "ppo", "PointGoal1", 15).safe and cell(s, "ppo-lag", "PointGoal1", 15).win
    assert cell(s, "ppo", "PointGoal1", 30).safe and cell(s, "ppo", "PointGoal1", 30).win  # C 25 < 30, R 11 > 6
    assert cell(s, "ppo", "PointGoal1", 30).runs == cell(s, "ppo", "PointGoal1", 15).runs  # the same run
    assert cell(s, "ppo-cost", "PointGoal2", 25).seeds == 1
    assert {r.learner: r.total for r in s.learners}["ppo"] == {"cells": 2, "wins": 1, "safe": 1}


def test_old_sweeps_with_one_ppo_run_per_bound_are_not_counted_twice(tmp_path):
    root = tmp_path / "sweep"
    for d in (15, 30):
        write_run(root / f"ppo{d}", "ppo", "PointGoal1", d, [10], [20])
        write_run(root / f"lag{d}", "ppo-lag", "PointGoal1", d, [5], [10])
    s = summary_table([root], reps=50)
    assert [(c.learner, c.safety_bound, c.seeds) for c in s.cells] == [
        ("ppo", 15.0, 1), ("ppo-lag", 15.0, 1), ("ppo", 30.0, 1), ("ppo-lag", 30.0, 1)]


def test_bad_input_is_a_clear_error(study, tmp_path):
    with pytest.raises(ValueError, match="is not a folder"):
        summary_table([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no crax run folder"):
        summary_table([tmp_path / "empty"])
    with pytest.raises(ValueError, match="no finished run"):
        summary_table([study / "g"])
    with pytest.raises(ValueError, match="policy must be one of stochastic, deterministic"):
        summary_table([study], policy="greedy")


def test_crax_table_prints_markdown_and_writes_files(study, tmp_path, capsys):
    from crax.cli import main

    main(["table", str(study / "b"), str(study / "a"), "--out", str(tmp_path / "t"), "--reps", "20"])
    out = capsys.readouterr().out
    assert "| ppo-lag | PointGoal1 | 1 | 25 | 2 | 8.50 ± 6.35 | 21.00 ± 12.71 | yes | win |" in out
    assert out == (tmp_path / "t.md").read_text() and (tmp_path / "t.csv").exists() and (tmp_path / "t.json").exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["table", str(tmp_path / "missing")])
    assert exit_info.value.code == 2 and "is not a folder" in capsys.readouterr().err


def test_the_cost_tail_columns_average_each_seeds_statistics(tmp_path):
    """P(C > d), CVaR and cost rate: per-seed statistics of the run, their mean and Student-t interval over
    seeds; '-' where a run predates them, and over_bound unknown where a bound-free run stands in at another d."""
    write_run(tmp_path / "a", "ppo-lag", "PointGoal1", 25, [9, 9, 9], [20, 22, 24],
              tails=[(0.1, 60.0, 0.02), (0.2, 70.0, 0.03), (0.3, 80.0, 0.04)])
    write_run(tmp_path / "b", "ppo-pid", "PointGoal1", 25, [7], [24])  # an older run: no tails
    write_run(tmp_path / "c", "ppo", "PointGoal1", 25, [12, 12], [30, 30], tails=[(0.5, 50.0, 0.03)] * 2)
    write_run(tmp_path / "d", "ppo-lag", "PointGoal1", 40, [5], [10])  # so that the bound-free ppo stands at 40 too
    s = summary_table([tmp_path], reps=50)
    lag = cell(s, "ppo-lag", "PointGoal1", 25)
    half = T_975_2 * 0.1 / math.sqrt(3)  # the three seeds' values step by 0.1, 10 and 0.01: std 0.1, 10, 0.01
    assert lag.over_bound_mean == pytest.approx(0.2) and lag.over_bound_ci == pytest.approx((0.2 - half, 0.2 + half))
    assert lag.cvar_mean == pytest.approx(70.0) and lag.cvar_ci == pytest.approx((70 - 100 * half, 70 + 100 * half))
    assert lag.cost_rate_mean == pytest.approx(0.03)
    old = cell(s, "ppo-pid", "PointGoal1", 25)
    assert math.isnan(old.over_bound_mean) and old.cvar_ci is None
    ppo_own, ppo_other = cell(s, "ppo", "PointGoal1", 25), cell(s, "ppo", "PointGoal1", 40)
    assert ppo_own.over_bound_mean == 0.5 and math.isnan(ppo_other.over_bound_mean)
    assert ppo_other.cvar_mean == 50.0  # a CVaR of costs holds at any bound
    md = to_markdown(s)
    assert "| P(C > d) | CVaR C | cost rate |" in md
    assert f"| 0.20 ± {half:.2f} | 70.00 ± {100 * half:.2f} | 0.0300 ± {0.01 * T_975_2 / math.sqrt(3):.4f} |" in md
    assert "| ppo-pid | PointGoal1 | 1 | 25 | 1 | 7.00 | 24.00 | yes |  | - | - | - |" in md
