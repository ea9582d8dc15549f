"""crax sweep: the grid, the manifest, skipping finished cells, resuming partial ones, restarting
cells without a checkpoint, refusing other arguments, --dry-run, and one real local cell."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from crax import runs
from crax.cli import main
from crax.runs import checkpoint as ckpt
from crax.runs import training
from crax.studies import summary_table, sweep
from crax.studies.cells import cell_state
from tests.learners.conftest import TINY, TOY_ENV_ID

STEPS_PER_ITER = 64  # TINY: 8 envs × 8 steps
BOUNDS = (1.0, 2.0, 3.0)


class FakeTrain:
    """Stands in for runs.train: writes config.json, a checkpoint and results.json as a run would,
    records each call, and raises ``fail[name]`` for the named cells (after their first checkpoint)."""

    def __init__(self, fail=None):
        self.calls: list[tuple[str, str]] = []
        self.env_kwargs: dict[str, object] = {}
        self.fail = dict(fail or {})

    def __call__(self, learner, config=None, env=None, *, run_dir, resume=False, progress=None, env_kwargs=None, **_):
        name = Path(run_dir).name
        self.calls.append(("resume" if resume else "train", name))
        self.env_kwargs[name] = env_kwargs
        if resume:
            record = ckpt.read_config(run_dir)
            config = ckpt.config_from_dict(runs.get_learner(record["learner"]).Config, record["config"])
            learner, env = record["learner"], record["env"]
        else:
            assert not (Path(run_dir) / ckpt.CONFIG_FILE).exists()  # runs.train refuses an existing run
            Path(run_dir).mkdir(parents=True, exist_ok=True)
            ckpt.write_config(run_dir, learner=learner, env_id=env, env_kwargs={}, config=config)
        ckpt.save_checkpoint(run_dir, {"w": np.zeros(1)}, env_steps=STEPS_PER_ITER, iteration=1)
        if name in self.fail:
            raise self.fail.pop(name)
        steps = config.num_iterations * config.steps_per_iteration
        final = [{"return": 1.0, "cost": 0.0, "policy": "stochastic", "safe": True}] * config.num_seeds
        (Path(run_dir) / runs.RESULTS_FILE).write_text(json.dumps(
            {"learner": learner, "env": env, "env_steps": steps, "safety_bound": config.safety_bound,
             "eval_policy": "stochastic", "final": final, "evals": []}))


def run_sweep(out, fake, monkeypatch, bounds=BOUNDS, **overrides):
    monkeypatch.setattr(training, "train", fake)
    return sweep(out, ["ppo-lag"], [TOY_ENV_ID], bounds, num_seeds=2,
                 overrides={**TINY, "total_steps": 2 * STEPS_PER_ITER, **overrides}, echo=lambda s: None)


def statuses(out):
    return {c["name"]: c["status"] for c in json.loads((out / "manifest.json").read_text())["cells"]}


def test_interrupted_sweep_skips_finished_resumes_partial_and_restarts_unstarted(tmp_path, monkeypatch):
    out = tmp_path / "sweep"
    first = FakeTrain(fail={"ToyEnv-ppo-lag-d2": KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        run_sweep(out, first, monkeypatch)
    assert first.calls == [("train", "ToyEnv-ppo-lag-d1"), ("train", "ToyEnv-ppo-lag-d2")]
    assert statuses(out) == {"ToyEnv-ppo-lag-d1": "done", "ToyEnv-ppo-lag-d2": "interrupted",
                             "ToyEnv-ppo-lag-d3": "pending"}
    # a cell killed after writing config.json but before its first checkpoint
    d3 = out / "ToyEnv-ppo-lag-d3"
    d3.mkdir()
    (d3 / "config.json").write_text((out / "ToyEnv-ppo-lag-d1" / "config.json").read_text())
    (d3 / "metrics.jsonl").write_text('{"step": 64, "seed": 0}\n')
    assert [cell_state(out / f"ToyEnv-ppo-lag-d{b}") for b in (1, 2, 3)] == ["done", "partial", "restart"]

    second = FakeTrain()
    result = run_sweep(out, second, monkeypatch)
    assert second.calls == [("resume", "ToyEnv-ppo-lag-d2"), ("train", "ToyEnv-ppo-lag-d3")]
    assert not (d3 / "metrics.jsonl").exists()  # restarted from scratch
    assert set(statuses(out).values()) == {"done"} and not result.failed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["grid"]["safety_bounds"] == list(BOUNDS) and manifest["grid"]["num_seeds"] == 2
    assert manifest["grid"]["overrides"]["total_steps"] == 128 and manifest["grid"]["overrides"]["actor_hidden"] == [16]
    assert [c["dir"] for c in manifest["cells"]] == [f"ToyEnv-ppo-lag-d{b}" for b in (1, 2, 3)]

    third = FakeTrain()
    run_sweep(out, third, monkeypatch)
    assert third.calls == []


def test_a_results_file_short_of_the_budget_is_not_finished(tmp_path, monkeypatch):
    out = tmp_path / "sweep"
    run_sweep(out, FakeTrain(), monkeypatch, bounds=(1.0,))
    results = out / "ToyEnv-ppo-lag-d1" / runs.RESULTS_FILE
    record = json.loads(results.read_text())
    results.write_text(json.dumps({**record, "final": record["final"][:1]}))  # one of two seeds
    assert cell_state(results.parent) == "partial"
    fake = FakeTrain()
    run_sweep(out, fake, monkeypatch, bounds=(1.0,))
    assert fake.calls == [("resume", "ToyEnv-ppo-lag-d1")]


def test_failed_cell_is_recorded_and_the_rest_trains(tmp_path, monkeypatch):
    fake = FakeTrain(fail={"ToyEnv-ppo-lag-d1": runs.TrainingDiverged("loss became NaN")})
    result = run_sweep(tmp_path / "sweep", fake, monkeypatch, bounds=(1.0, 2.0))
    assert [c["name"] for c in result.failed] == ["ToyEnv-ppo-lag-d1"]
    assert "TrainingDiverged: loss became NaN" in result.failed[0]["error"]
    assert statuses(tmp_path / "sweep") == {"ToyEnv-ppo-lag-d1": "failed", "ToyEnv-ppo-lag-d2": "done"}


def test_other_arguments_into_the_same_folder_are_refused(tmp_path, monkeypatch):
    out = tmp_path / "sweep"
    run_sweep(out, FakeTrain(), monkeypatch)
    fake = FakeTrain()
    with pytest.raises(ValueError, match=r"safety_bounds: \[1.0, 2.0, 3.0\] in the folder, \[1.0, 2.0\] now"):
        run_sweep(out, fake, monkeypatch, bounds=(1.0, 2.0))
    with pytest.raises(ValueError, match="total_steps: 128 in the folder, 256 now"):
        run_sweep(out, fake, monkeypatch, total_steps=256)
    with pytest.raises(ValueError, match="learning_rate: the default in the folder, 0.001 now"):
        run_sweep(out, fake, monkeypatch, learning_rate=1e-3)
    assert fake.calls == []


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(learners=["ppo", "ppo-lagg"]), "unknown learner 'ppo-lagg'; valid choices: .*ppo-lag,"),
    (dict(envs=["PointGoal9"]), "valid levels: 1, 2, 3"),
    (dict(envs=["tests.learners.toy_env:Nope"]), "cannot import env class"),
    (dict(overrides={"totl_steps": 5}), r"unknown config field\(s\) \['totl_steps'\] for learner 'ppo'; valid fields"),
    (dict(overrides={"num_seeds": 5}), "grid dimensions"),
    (dict(overrides={"num_envs": 7}), "must be a multiple of num_envs"),
    (dict(safety_bounds=[]), "safety_bounds needs at least one value"),
    (dict(learners=["ppo", "ppo"]), "learners lists ppo more than once"),
    (dict(backend="slurm"), "backend must be 'local' or 'ray'"),
    (dict(envs=["PointGoal1"], env_kwargs={"constraints": {"action_energi": {}}}),
     "unknown constraint 'action_energi'; valid choices: ActionEnergy,"),
    (dict(envs=["PointGoal1"], env_kwargs={"constraints": {"action_energy": {"wieght": 1}}}),
     "takes no parameter.*wieght.*its parameters: weight"),
    (dict(env_kwargs={"constraints": {"action_energy": {}}}), "not to the env class"),
    (dict(learners=["ppo", "ppo-lag"], overrides={**TINY, "budgets": ("cost/contact=5",)}),
     "learner.s. ppo take no per-term budgets; learners that do: .*ppo-lag"),
])
def test_bad_grid_is_refused_before_anything_trains(tmp_path, monkeypatch, kwargs, message):
    fake = FakeTrain()
    monkeypatch.setattr(training, "train", fake)
    args = dict(learners=["ppo"], envs=[TOY_ENV_ID], safety_bounds=[25.0], overrides=TINY) | kwargs
    with pytest.raises(ValueError, match=message):
        sweep(tmp_path / "sweep", **args, echo=lambda s: None)
    assert fake.calls == [] and not (tmp_path / "sweep").exists()


def test_added_constraints_reach_every_cell_and_are_part_of_the_grid(tmp_path, monkeypatch, capsys):
    fake = FakeTrain()
    monkeypatch.setattr(training, "train", fake)
    out = tmp_path / "sweep"
    tiny = [a for k, v in TINY.items() for a in (f"--{k.replace('_', '-')}", *map(str, np.atleast_1d(v)))]
    args = ["sweep", "--learners", "ppo-lag", "--envs", "PointGoal1", "--safety-bounds", "5", "10", "--num-seeds", "1",
            "--out", str(out), "--total-steps", "64", *tiny, "--budgets", "cost/action_energy=2", "cost/contact=5",
            "--constraint", "action_energy:weight=0.05", "--no-progress"]
    main(args)
    energy = {"constraints": {"action_energy": {"weight": 0.05}}}
    assert fake.env_kwargs == {"PointGoal1-ppo-lag-d5": energy, "PointGoal1-ppo-lag-d10": energy}
    assert json.loads((out / "manifest.json").read_text())["grid"]["env_kwargs"] == energy
    assert "added constraints: action_energy:weight=0.05" in capsys.readouterr().out
    stored = ckpt.read_config(out / "PointGoal1-ppo-lag-d5")["config"]
    assert stored["budgets"] == ["cost/action_energy=2", "cost/contact=5"]
    with pytest.raises(SystemExit) as exc:  # the same folder with another constraint weight is refused
        main([a.replace("weight=0.05", "weight=0.1") for a in args])
    assert exc.value.code == 2
    assert ('constraints: {"action_energy": {"weight": 0.05}} in the folder, {"action_energy": {"weight": 0.1}} now'
            in capsys.readouterr().err)


def test_missing_ray_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ValueError, match=r'pip install -e "\.\[ray\]"'):
        sweep(tmp_path / "sweep", ["ppo"], [TOY_ENV_ID], overrides=TINY, backend="ray", echo=lambda s: None)
    assert not (tmp_path / "sweep").exists()


def test_dry_run_prints_the_grid_and_trains_nothing(tmp_path, monkeypatch, capsys):
    fake = FakeTrain()
    monkeypatch.setattr(training, "train", fake)
    out = tmp_path / "sweep"
    tiny = [a for k, v in TINY.items() for a in (f"--{k.replace('_', '-')}", *map(str, np.atleast_1d(v)))]
    main(["sweep", "--learners", "ppo", "ppo-lag", "--envs", TOY_ENV_ID, "--safety-bounds", "15", "25", "35",
          "--num-seeds", "3", "--out", str(out), "--total-steps", "1e2", *tiny, "--dry-run"])
    lines = capsys.readouterr().out.splitlines()
    assert "2 learner(s) × 1 env(s) × 3 bound(s): 4 cell(s), 3 seed(s) each (trained together)" in lines
    assert "ppo ignore(s) the bound: one cell per env, judged against every bound" in lines
    # 100 steps round up to 2 iterations of 64: 128 per seed, 384 per cell; PPO trains once for all bounds
    assert lines[4].split() == ["ToyEnv-ppo", "ppo", TOY_ENV_ID, "all", "3", "128", "384", "train"]
    assert [line.split()[0] for line in lines if line.startswith("ToyEnv-")] == [
        "ToyEnv-ppo", "ToyEnv-ppo-lag-d15", "ToyEnv-ppo-lag-d25", "ToyEnv-ppo-lag-d35"]
    assert "total: 1,536 env steps" in lines
    assert fake.calls == [] and not out.exists()


def test_dry_run_shows_what_a_rerun_does(tmp_path, monkeypatch, capsys):
    out = tmp_path / "sweep"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(out, FakeTrain(fail={"ToyEnv-ppo-lag-d2": KeyboardInterrupt()}), monkeypatch)
    result = sweep(out, ["ppo-lag"], [TOY_ENV_ID], BOUNDS, num_seeds=2,
                   overrides={**TINY, "total_steps": 128}, dry_run=True)
    actions = {line.split()[0]: " ".join(line.split()[7:]) for line in capsys.readouterr().out.splitlines()
               if line.startswith("ToyEnv-")}
    assert actions == {"ToyEnv-ppo-lag-d1": "skip (finished)", "ToyEnv-ppo-lag-d2": "resume from step 64",
                       "ToyEnv-ppo-lag-d3": "train"}
    assert [c["status"] for c in result.cells] == ["done", "pending", "pending"]


def test_a_real_local_cell_trains_and_summarizes(tmp_path):
    out = tmp_path / "sweep"
    result = sweep(out, ["ppo-lag"], [TOY_ENV_ID], [5.0], num_seeds=2,
                   overrides={**TINY, "total_steps": STEPS_PER_ITER}, progress=False, echo=lambda s: None)
    assert not result.failed
    run_dir = out / "ToyEnv-ppo-lag-d5"
    assert ckpt.read_config(run_dir)["config"]["num_seeds"] == 2
    assert ckpt.read_config(run_dir)["config"]["safety_bound"] == 5.0
    results = json.loads((run_dir / runs.RESULTS_FILE).read_text())
    assert results["env_steps"] == STEPS_PER_ITER and len(results["final"]) == 2
    summary = summary_table([out], reps=10)
    (cell,) = summary.cells
    assert cell.seeds == 2 and cell.return_mean == pytest.approx(np.mean([f["return"] for f in results["final"]]))


def test_set_gives_a_learner_specific_field_to_every_cell(tmp_path, monkeypatch, capsys):
    fake = FakeTrain()
    monkeypatch.setattr(training, "train", fake)
    out = tmp_path / "sweep"
    tiny = [a for k, v in TINY.items() for a in (f"--{k.replace('_', '-')}", *map(str, np.atleast_1d(v)))]
    base = ["sweep", "--envs", TOY_ENV_ID, "--num-seeds", "1", "--total-steps", "64", *tiny, "--no-progress"]
    main([*base, "--learners", "cpo", "pcpo", "--out", str(out), "--set", "constraint_value=per-step",
          "--set", "cg_iterations=5"])
    for cell in ("ToyEnv-cpo-d25", "ToyEnv-pcpo-d25"):
        stored = ckpt.read_config(out / cell)["config"]
        assert (stored["constraint_value"], stored["cg_iterations"]) == ("per-step", 5)
    assert "overrides: " in capsys.readouterr().out
    refused = [
        (["--learners", "ppo-lag", "cpo", "--set", "constraint_value=per-step"],
         "unknown config field(s) ['constraint_value'] for learner 'ppo-lag'"),
        (["--learners", "cpo", "--set", "constraint_value=clipped"], "'constraint_value' must be one of per-step, episode"),
        (["--learners", "cpo", "--set", "total_steps=100"], "total_steps has its own flag, --total-steps"),
        (["--learners", "cpo", "--set", "cg_iterations"], "'cg_iterations' is not FIELD=VALUE"),
        (["--learners", "cpo", "--set", "cg_iterations=5", "--set", "cg_iterations=6"], "cg_iterations is given twice"),
    ]
    for args, message in refused:
        with pytest.raises(SystemExit) as exc:
            main([*base, *args, "--out", str(tmp_path / "other")])
        assert exc.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "other").exists()
