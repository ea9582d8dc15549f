"""benchmarks/bench_envs.py's results lines (:func:`crax.bench.row_record`): what a line records of the
implementation and the step it measured."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import mujoco
import pytest
import tyro

from crax.bench import BenchRow, Physics, row_record

ROOT = Path(__file__).resolve().parent.parent


def fake_env(integrator: str):
    m = mujoco.MjModel.from_xml_string(f'<mujoco><option integrator="{integrator}"/><worldbody><body>'
                                       '<freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    return SimpleNamespace(body=SimpleNamespace(name="Point"), suite=SimpleNamespace(name="Circle"), mj_model=m)


ROW = BenchRow(num_envs=256, compile_s=3.21, env_steps_per_s=1000.4, physics_steps_per_s=1200.0)


def test_a_row_records_its_physics_and_a_warp_row_its_one_device():
    jax_row = row_record("PointCircle1", fake_env("Euler"), ROW, load=1.234, sitting="S", physics="jax")
    warp_row = row_record("PointCircle1", fake_env("Euler"), ROW, load=1.234, sitting="S", physics="warp")
    assert jax_row["physics"] == "jax" and warp_row["physics"] == "warp"
    assert warp_row["devices"] == "1 cpu" and jax_row["devices"].endswith(" cpu")
    assert jax_row["env_steps_per_s"] == 1000 and jax_row["ratio"] == round(1200.0 / 1000.4, 3)
    assert jax_row["load_1min"] == 1.23 and jax_row["sitting"] == "S" and "ceiling_ratio" not in jax_row
    assert jax_row["cpu_count"] == warp_row["cpu_count"] == os.cpu_count() and jax_row["machine"]
    assert "rk4_stages" not in jax_row  # only an RK4 model's step has two ways to compile


def test_an_rk4_row_records_how_its_step_was_compiled(monkeypatch):
    monkeypatch.delenv("CRAX_RK4_STAGES", raising=False)
    assert row_record("X", fake_env("RK4"), ROW, load=1.0, sitting="S", physics="jax")["rk4_stages"] == "unrolled"
    monkeypatch.setenv("CRAX_RK4_STAGES", "rolled")
    assert row_record("X", fake_env("RK4"), ROW, load=1.0, sitting="S", physics="jax")["rk4_stages"] == "rolled"


@dataclasses.dataclass(frozen=True)
class PhysicsArgs:
    physics: tuple[Physics, ...] = ("jax",)


def test_physics_takes_both_implementations_and_refuses_others(capsys):
    assert tyro.cli(PhysicsArgs, args=["--physics", "jax", "warp"]).physics == ("jax", "warp")
    assert tyro.cli(PhysicsArgs, args=[]).physics == ("jax",)
    with pytest.raises(SystemExit):
        tyro.cli(PhysicsArgs, args=["--physics", "cuda"])
    err = capsys.readouterr().err
    assert "jax" in err and "warp" in err


def test_the_script_refuses_another_physics():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_envs.py"), "--physics", "cuda"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "cuda" in done.stderr and "warp" in done.stderr
