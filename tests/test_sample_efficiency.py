"""benchmarks/sample_efficiency.py (:mod:`crax.reports.sample_efficiency`): curves read from a run's
records, when a learner reaches the reference, its arguments, and the table docs/learners.md shows from
its JSON."""

import json
import sys

import numpy as np
import pytest

from crax import reports
from crax.reports import arguments
from crax.reports import sample_efficiency as bench


def write_metrics(path, records):
    path.mkdir(parents=True, exist_ok=True)
    (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_curves_sum_training_minutes_and_average_the_seeds_latest_episodes(tmp_path):
    sps = {100: 10.0, 200: 20.0, 300: 5.0}  # per call: steps of all seeds per second
    recs = []
    for t, s0, s1 in ((100, (1.0, 4.0), None), (200, None, (3.0, 0.0)), (300, (5.0, 2.0), (7.0, 6.0))):
        for seed, ep in ((0, s0), (1, s1)):
            r = {"step": t, "seed": seed, "perf/steps_per_second": sps[t], "episode/count": int(ep is not None)}
            if ep:
                r.update({"episode/return": ep[0], "episode/cost": ep[1]})
            recs.append(r)
    recs.append({"step": 300, "seed": 0, "eval/stochastic/return": 9.0})  # an evaluation record: no time, no episode
    write_metrics(tmp_path, recs)
    c = bench.curves(tmp_path, seeds=2)
    np.testing.assert_allclose(c["step"], [100, 200, 300])
    np.testing.assert_allclose(c["minutes"], np.cumsum([100 * 2 / 10, 100 * 2 / 20, 100 * 2 / 5]) / 60)
    assert np.isnan(c["return"][0])  # seed 1 has finished no episode yet
    np.testing.assert_allclose(c["return"][1:], [(1 + 3) / 2, (5 + 7) / 2])  # seed 0 carries its step-100 episode
    np.testing.assert_allclose(c["cost"][1:], [(4 + 0) / 2, (2 + 6) / 2])


def test_a_learner_reaches_the_reference_only_when_return_and_cost_both_qualify():
    curve = {"step": np.array([1.0, 2, 3, 4, 5]), "minutes": np.array([0.5, 1, 1.5, 2, 2.5]),
             "return": np.array([0.0, 10, 10, 10, 10]), "cost": np.array([0.0, 50, 50, 10, 10])}
    # window 1: the raw values; the return qualifies from step 2, the cost only from step 4
    assert bench.reach(curve, target=10, bound=25, window=1) == {"steps": 4, "minutes": 2.0}
    # window 2 averages (step 4: return 10, cost 30; step 5: 10, 10)
    np.testing.assert_allclose(bench.smoothed(curve["step"], curve["cost"], 2), [0, 25, 50, 30, 10])
    assert bench.reach(curve, target=10, bound=25, window=2) == {"steps": 5, "minutes": 2.5}
    assert bench.reach(curve, target=11, bound=25, window=1) is None


def test_arguments_name_the_learners_and_fields_they_may_take():
    learners = ("ppo-lag", "sac-lag")
    assert arguments.parse_steps(("sac-lag=5e5",), learners, 2e6) == {"ppo-lag": 2_000_000, "sac-lag": 500_000}
    with pytest.raises(SystemExit, match="LEARNER one of \\['ppo-lag', 'sac-lag'\\]"):
        arguments.parse_steps(("td3-lag=1e6",), learners, 2e6)
    sets = arguments.parse_sets(("ppo-lag:batch_size=128", "num_envs=64", "init_alpha=0.5"), learners)
    assert sets == {"ppo-lag": {"batch_size": 128, "num_envs": 64}, "sac-lag": {"num_envs": 64, "init_alpha": 0.5}}
    with pytest.raises(SystemExit, match="no learner of \\['ppo-lag'\\] has the config field 'init_alpha'"):
        arguments.parse_sets(("ppo-lag:init_alpha=0.5",), learners)
    with pytest.raises(SystemExit, match="'td3-lag' is not one of the learners"):
        arguments.parse_sets(("td3-lag:batch_size=1",), learners)
    with pytest.raises(SystemExit, match="FIELD=VALUE"):
        arguments.parse_sets(("batch_size",), learners)


def test_the_table_shows_each_learner_and_where_it_reached_the_reference(tmp_path):
    assert reports.render("sample-efficiency-PointGoal1", tmp_path).startswith("No sitting on PointGoal1 yet")

    def row(learner, ret, ci, hit):
        return {"learner": learner, "env_steps": 2_000_000, "minutes": 30.25, "return": ret, "return_ci": ci,
                "cost": 20.0, "cost_ci": None, "safe": True, "policy": "stochastic", "reaches_reference": hit,
                "finished": "2026-11-29T20:00", "load_1min_now": 2.1, "device": "cpu"}

    data = {"args": {"num_seeds": 3, "reference": "ppo-lag", "window_steps": 100000.0}, "safety_bound": 25.0,
            "target_return": 88.5, "rows": [row("ppo-lag", 90.0, [85.0, 95.0], {"steps": 2_000_000, "minutes": 30.25}),
                                            row("sac-lag", 40.0, None, None),
                                            {**row("td3-lag", 50.0, None, None), "finished": None, "load_1min_now": None}]}
    (tmp_path / "sample_efficiency_PointGoal1.json").write_text(json.dumps(data))
    lines = reports.render("sample-efficiency-PointGoal1", tmp_path).splitlines()
    assert lines[2] == ("| ppo-lag | 2,000,000 | 30.2 | 90.0 (85.0 to 95.0) | 20.0 | yes | 2,000,000 steps, 30.2 min "
                        "| 2026-11-29 20:00 (2.1) |")
    assert lines[3].endswith("| 40.0 | 20.0 | yes | not reached | 2026-11-29 20:00 (2.1) |")
    assert lines[4].endswith("| not reached | not recorded (trained elsewhere) |")
    assert "its last 100,000 steps, 88.5" in lines[6] and "the bound 25" in lines[6]


def test_a_reused_run_reports_the_sitting_that_trained_it(tmp_path):
    trained = bench.sitting(tmp_path, trained=True)
    assert set(trained) == {"finished", "load_1min_now"} and trained["finished"]
    assert json.loads((tmp_path / bench.SITTING).read_text()) == trained
    assert bench.sitting(tmp_path, trained=False) == trained  # a later call that reuses the run
    elsewhere = tmp_path / "copied"
    elsewhere.mkdir()
    assert bench.sitting(elsewhere, trained=False) == {"finished": None, "load_1min_now": None}


def test_a_terminated_sitting_says_how_to_resume_without_a_traceback(monkeypatch, capsys, tmp_path):
    from crax.runs import Terminated

    def terminated(*args, **kwargs):
        raise Terminated()  # what a learner's run raises after checkpointing on SIGTERM

    monkeypatch.setattr(bench, "run_cell", terminated)
    monkeypatch.setattr(sys, "argv", ["sample_efficiency.py", "--env", "PointGoal1"])
    with pytest.raises(SystemExit) as exc:
        bench.cli(tmp_path)
    assert exc.value.code == 143
    err = capsys.readouterr().err
    assert "python benchmarks/sample_efficiency.py --env PointGoal1` resumes" in err and "Traceback" not in err
