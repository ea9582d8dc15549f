"""The ``crax`` command line: list, bench (with its C MuJoCo ceiling) and clear errors.

Most tests call ``crax.cli.main`` in this process (argv in, stdout/stderr through capsys, the exit
status through SystemExit); ``test_console_script_smoke`` runs the installed ``crax`` script itself.
"""

import shutil
import subprocess
import sys

import pytest

from crax.cli import main

CRAX = shutil.which("crax") or f"{sys.executable} -m crax.cli"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CRAX.split(), *args], capture_output=True, text=True, timeout=600)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``crax ARGS`` in this process: (exit status, stdout, stderr)."""
    code = 0
    try:
        main(list(args))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out = capsys.readouterr()
    return code, out.out, out.err


def check_list(stdout: str) -> None:
    for expected in ("Point", "HalfCheetah", "Goal", "Velocity", "PointGoal1", "HalfCheetahVelocity3", "SledGoal2", "ppo-lag"):
        assert expected in stdout
    assert "levels: 1, 2, 3" in stdout
    # every body with its kinds and the suites it runs in
    lines = {line.split()[0]: line for line in stdout.splitlines() if "kinds:" in line}
    assert "navigation" in lines["Spider"] and "suites: Button, Circle, Goal, Push, SpiderLegs, Velocity" in lines["Spider"]
    assert "arm" in lines["Reacher"] and lines["Reacher"].endswith("suites: Reach")
    assert "planar" in lines["Hopper"] and lines["Hopper"].endswith("suites: Pathway, Velocity")
    assert "multi-agent learners: mappo-lag" in stdout and "SafetyMAHalfCheetah2x3Velocity-v0" in stdout
    assert "mappo-lag" not in stdout.split("learners: ", 1)[1].split("\n", 1)[0]  # not among the single-agent ones


def test_list_prints_registry(capsys):
    code, out, err = cli(capsys, "list")
    assert code == 0, err
    check_list(out)


def test_help_lists_commands(capsys):
    for args in ((), ("--help",), ("-h",)):
        code, out, _ = cli(capsys, *args)
        assert code == 0
        for cmd in ("list", "bench", "train", "eval"):
            assert f"crax {cmd}" in out, args


@pytest.mark.slow  # two fresh processes: the console script end to end (its exit status 2 on bad input, in a
# fresh process: tests/learners/test_train.py::test_console_script_trains; the bad env's message: below)
def test_console_script_smoke():
    out = run("list")
    assert out.returncode == 0, out.stderr
    check_list(out.stdout)
    out = run("--help")
    assert out.returncode == 0 and "crax train" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bench", "--env", "PointGoal9"), "valid levels: 1, 2, 3"),
        (("bench", "--env", "RobotGoal1"), "unknown body 'Robot'; valid choices"),
        (("bench", "--env", "PointJump1"),
         "valid suites: Button, Circle, Goal, HumanoidHeight, Pathway, Push, Reach, SpiderLegs, Velocity"),
    ],
)
def test_bad_env_is_a_clear_error(args, message, capsys):
    code, _, err = cli(capsys, *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_bench_prints_table(capsys):
    import os

    code, out, err = cli(capsys, "bench", "--env", "PointCircle1", "--num-envs", "2", "--steps", "5", "--repeats", "1")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0].endswith(f"C MuJoCo: mujoco.rollout on {os.cpu_count()} CPU thread(s)")
    assert "env/physics cost" in lines[1] and lines[1].split()[-4:] == ["C", "MuJoCo", "steps/s", "crax/C"]
    num_envs, compile_s, env_sps, phys_sps, ratio, c_sps, c_ratio = lines[2].split()
    assert num_envs == "2"
    env_sps, c_sps = float(env_sps.replace(",", "")), float(c_sps.replace(",", ""))
    assert env_sps > 0 and float(phys_sps.replace(",", "")) > 0 and c_sps > 0
    assert ratio.endswith("x")
    assert float(c_ratio.removesuffix("x")) == pytest.approx(env_sps / c_sps, rel=0.01, abs=0.006)
    assert ", C MuJoCo " in err


def test_bench_refuses_an_unknown_task_parameter_naming_the_valid_ones(capsys):
    code, _, err = cli(capsys, "bench", "--env", "PointCircle1", "--env-param", "vision_sise=64", "--num-envs", "1")
    assert code == 2 and "unknown parameter(s) vision_sise for PointCircle1; valid parameters:" in err
    code, _, err = cli(capsys, "bench", "--env", "PointCircle1", "--env-param", "physics=warp", "--num-envs", "1")
    assert code == 2 and "give it with --physics" in err


def test_bench_says_which_model_its_physics_steps():
    import crax
    from crax.bench import physics_note

    assert physics_note(crax.make("PointCircle1")) == ""  # nothing left out
    note = physics_note(crax.make("PointGoal1"))
    assert note.startswith("physics and C MuJoCo step the env's physics model: 2 of the scene's 15 bodies (13 mocap")


@pytest.mark.slow
def test_bench_without_ceiling_leaves_its_columns_empty(capsys, monkeypatch):
    from crax import bench_ceiling

    code, out, err = cli(capsys, "bench", "--env", "PointCircle1", "--num-envs", "2", "--steps", "5", "--repeats", "1",
                         "--no-ceiling")
    assert code == 0, err
    assert out.strip().splitlines()[2].split()[-2:] == ["-", "-"]
    assert "C MuJoCo" not in out.splitlines()[0] and ", C MuJoCo" not in err
    monkeypatch.setattr(bench_ceiling, "unavailable", lambda: "mujoco 9.9 has no mujoco.rollout")
    code, out, err = cli(capsys, "bench", "--env", "PointCircle1", "--num-envs", "2", "--steps", "5", "--repeats", "1")
    assert code == 0, err
    assert "crax: no C MuJoCo ceiling: mujoco 9.9 has no mujoco.rollout; its columns read '-'" in err
    assert out.strip().splitlines()[2].split()[-2:] == ["-", "-"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--num-envs", "0"), "--num-envs must be >= 1, got 0"),
        (("--num-envs", "-4"), "--num-envs must be >= 1, got -4"),  # was "got -2" (per device)
        (("--num-envs", "64", "0"), "--num-envs must be >= 1, got 0"),
        (("--num-envs",), "--num-envs needs at least one value"),
        (("--steps", "0"), "--steps must be >= 1, got 0"),
        (("--repeats", "-1"), "--repeats must be >= 1, got -1"),
    ],
)
def test_bench_bad_counts_are_clear_errors(args, message, capsys, monkeypatch):
    import crax

    def make(*a, **k):
        raise AssertionError("counts must be checked before the env is built")

    monkeypatch.setattr(crax, "make", make)
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--env", "PointGoal1", *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"crax: error: {message}")
    assert "Traceback" not in err


def test_bench_function_checks_counts():
    from crax.bench import bench

    for kwargs, message in [
        (dict(num_envs=0), "num_envs must be >= 1, got 0"),
        (dict(num_envs=2, steps=0), "steps must be >= 1, got 0"),
        (dict(num_envs=2, repeats=0), "repeats must be >= 1, got 0"),
    ]:
        with pytest.raises(ValueError) as err:
            bench(None, **kwargs)  # checked before the env is touched
        assert str(err.value) == message


def test_the_readme_trains_with_the_quick_start_batch_declared_once():
    """The README's first command and its trust-region sweep say crax.cli.quick_start's batch, which
    makes a valid config of the quick start's learner (its batch a whole number of env steps per env)."""
    from pathlib import Path

    from crax.cli.quick_start import QUICK_START_BATCH, QUICK_START_LEARNER, batch_flags, train_command
    from crax.runs.envs import get_learner

    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())  # its lines joined
    assert train_command() in readme
    assert f"crax sweep --learners L --envs PointGoal1 --num-seeds 3 --total-steps 2e6 {batch_flags()}" in readme
    config = get_learner(QUICK_START_LEARNER).Config(**QUICK_START_BATCH)
    assert (config.batch_size * config.num_minibatches) % config.num_envs == 0


def test_image_size_sets_a_vision_ids_vision_size():
    from crax.cli.train import ENV_FLAGS, env_kwargs_of, parse_learner_command

    argv = ["ppo-lag", "--env", "SafetyPointGoal1Vision-v0", "--image-size", "64"]
    _, _, args = parse_learner_command(argv, "crax train", "", extra=ENV_FLAGS)
    assert env_kwargs_of(args) == {"vision_size": 64}
    both = parse_learner_command([*argv, "--env-param", "vision_size=32"], "crax train", "", extra=ENV_FLAGS)[2]
    with pytest.raises(ValueError, match="set the same parameter"):
        env_kwargs_of(both)
