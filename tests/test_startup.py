"""crax.devices.startup: the compile cache, host devices, XLA's log and the compile notice, applied where crax
starts work (crax.make, the Trainer, the crax command) and never by ``import crax``."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.experimental.compilation_cache import compilation_cache

import crax
from crax import cli, render
from crax.devices import settings, startup
from crax.learners import PPOLag
from crax.learners.on_policy.trainer import Trainer
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

ROOT = Path(__file__).resolve().parents[1]
NOTICE = "crax: compiling (first call takes minutes on a CPU; cached afterwards)"


@pytest.fixture
def no_cache(tmp_path, monkeypatch):
    """No compile cache configured (as in a fresh process) and a private XDG_CACHE_HOME; the test
    session's cache (tests/conftest.py) is put back afterwards. Yields crax's default cache folder."""
    saved = {k: getattr(jax.config, k) for k in ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")}
    for var in ("CRAX_COMPILE_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    jax.config.update("jax_compilation_cache_dir", None)
    compilation_cache.reset_cache()
    yield tmp_path / "xdg" / "crax" / "jax"
    for k, v in saved.items():
        jax.config.update(k, v)
    compilation_cache.reset_cache()  # the next compile opens the session's cache again


@pytest.mark.slow  # a fresh process: what import crax does to a process that has not started JAX
def test_import_crax_changes_no_process_settings():
    script = "import json, os, jax, crax; print(json.dumps([os.environ.get('XLA_FLAGS'), jax.config.jax_compilation_cache_dir]))"
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_COMPILATION_CACHE_DIR")}
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[-1]) == [None, None]


@pytest.mark.parametrize("start", ["make", "trainer"])
def test_starting_work_caches_compiled_programs_in_the_user_cache(no_cache, start):
    jax.jit(lambda x: x * 2)(jnp.arange(3.0))  # a compile before crax starts: the cache still opens later
    if start == "make":
        crax.make("PointGoal1")
    else:
        Trainer(PPOLag, tiny(PPOLag.Config), ToyEnv())
    assert jax.config.jax_compilation_cache_dir == str(no_cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # cache even this tiny program
    jax.jit(lambda x: x * 3 + 1)(jnp.arange(4.0))
    assert any(no_cache.iterdir()), "no compiled program was written to the cache"


def test_a_cache_folder_of_the_users_own_wins(no_cache, tmp_path):
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "mine"))
    assert startup.compile_cache() == str(tmp_path / "mine")
    assert jax.config.jax_compilation_cache_dir == str(tmp_path / "mine")
    assert not no_cache.exists()


def test_the_cache_can_be_turned_off(no_cache, monkeypatch):
    monkeypatch.setenv("CRAX_COMPILE_CACHE", "0")
    assert startup.compile_cache() is None
    assert jax.config.jax_compilation_cache_dir is None


def test_an_unwritable_cache_folder_warns_and_work_goes_on(no_cache, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    with pytest.warns(RuntimeWarning, match="cannot create its compile cache directory .*JAX_COMPILATION_CACHE_DIR"):
        env = crax.make("PointGoal1")
    assert env.id == "PointGoal1" and jax.config.jax_compilation_cache_dir is None


def test_a_bad_cache_switch_is_a_clear_error(no_cache, monkeypatch, capsys):
    monkeypatch.setenv("CRAX_COMPILE_CACHE", "maybe")
    with pytest.raises(ValueError, match=r"CRAX_COMPILE_CACHE='maybe' is not a switch; use 1 .* or 0 \(off\)"):
        crax.make("PointGoal1")
    with pytest.raises(SystemExit) as exit_:
        cli.main(["list"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("crax: error: environment variable CRAX_COMPILE_CACHE")
    assert "Traceback" not in err


@pytest.mark.parametrize(("flags", "count", "expected"), [
    (None, "3", "--xla_force_host_platform_device_count=3"),
    ("--xla_dump_to=x", "3", "--xla_dump_to=x --xla_force_host_platform_device_count=3"),
    ("--xla_force_host_platform_device_count=2", "3", "--xla_force_host_platform_device_count=2"),  # the user's wins
    (None, "1", None),
])
def test_host_devices_go_into_xla_flags(monkeypatch, flags, count, expected):
    if flags is None:
        monkeypatch.delenv("XLA_FLAGS", raising=False)
    else:
        monkeypatch.setenv("XLA_FLAGS", flags)
    monkeypatch.setenv("CRAX_HOST_DEVICES", count)
    startup.host_devices()
    startup.host_devices()  # idempotent
    assert os.environ.get("XLA_FLAGS") == expected


def test_a_bad_host_device_count_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setenv("CRAX_HOST_DEVICES", "all")
    with pytest.raises(ValueError, match="CRAX_HOST_DEVICES='all' must be a whole number >= 1"):
        startup.host_devices()


@pytest.mark.slow  # a fresh process: XLA's C++ log settings are per process
def test_the_command_line_keeps_xlas_log_off_the_console(tmp_path):
    # XLA logs at error level when it cannot dump where XLA_FLAGS says, as it does for "Very slow
    # compile?": the same C++ log, at the same level.
    (tmp_path / "file").write_text("")
    script = textwrap.dedent("""
        import sys, jax
        from crax import cli
        jax.jit(lambda x: x + 1)(1.0)
        print("CLI", file=sys.stderr, flush=True)
        cli.main(["list"])
        jax.jit(lambda x: x * 5)(1.0)
    """)
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={tmp_path / 'file' / 'dump'}", "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    before, after = proc.stderr.split("CLI\n")
    assert "dump" in before  # XLA's log reaches stderr before the command line quiets it
    assert "dump" not in after, after[-2000:]


def test_the_command_line_says_a_compile_follows_once(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(startup._notice, "said", False)
    crax.make("PointGoal1")
    assert NOTICE not in capsys.readouterr().err  # library use stays quiet

    def stop(*args, **kwargs):
        raise ValueError("stopped before compiling")

    monkeypatch.setattr(render, "rollout", stop)
    for _ in range(2):
        with pytest.raises(SystemExit):
            cli.main(["render", "PointGoal1", "--out", str(tmp_path / "v.mp4")])
    err = capsys.readouterr().err
    assert err.count(NOTICE) == 1 and err.index(NOTICE) < err.index("crax: error: stopped before compiling")
    monkeypatch.setitem(startup._notice, "said", False)
    with pytest.raises(SystemExit):
        cli.main(["render", "NoSuchBody1", "--out", str(tmp_path / "v.mp4")])
    assert NOTICE not in capsys.readouterr().err  # a bad id fails before any notice


@pytest.mark.parametrize("var", settings.ENV_VARS, ids=lambda v: v.name)
def test_every_setting_refuses_a_bad_value_naming_itself_and_its_valid_values(var, monkeypatch):
    monkeypatch.setenv(var.name, "-2.5")
    with pytest.raises(ValueError, match=rf"^environment variable {var.name}='-2.5' .*(1|one of|>= 1)"):
        settings.read(var)
    monkeypatch.delenv(var.name)
    settings.read(var)  # its default is valid


def test_crax_environment_variables_are_read_through_the_settings_module_only():
    """Every ``CRAX_*`` variable that crax/devices and crax/core read is declared once, in crax.devices.settings."""
    declared = {v.name for v in settings.ENV_VARS}
    for path in [*(ROOT / "crax" / "devices").glob("*.py"), *(ROOT / "crax" / "core").glob("*.py")]:
        if path.name == "settings.py":
            continue
        text = path.read_text()
        assert "os.environ.get(\"CRAX_" not in text and "getenv(\"CRAX_" not in text, path
        for name in re.findall(r"\bCRAX_[A-Z0-9_]+", text):
            assert name in declared, (path, name)
