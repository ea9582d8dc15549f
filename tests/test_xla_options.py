"""crax.devices.xla_options: the XLA options of crax's own programs (decision 70), which step aside for the
user's XLA_FLAGS and CRAX_XLA_OPTIONS=0, and reach the programs crax compiles."""

import jax
import jax.numpy as jnp
import pytest

from crax import bench
from crax.devices import xla_options
from crax.learners import PPOLag
from crax.learners.on_policy.trainer import Trainer
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

BOGUS = {"xla_cpu_no_such_option_in_any_xla": "1"}


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv(xla_options.ENV, raising=False)
    monkeypatch.setenv("XLA_FLAGS", "")


def norms(x):  # a reduction over 3-vectors, as an MJX step's rotations and norms are
    return jnp.sqrt((x * x).sum(-1))


def test_cpu_programs_compile_with_the_dot_only_ynn_fusions(clean_env):
    assert jax.default_backend() == "cpu"
    assert xla_options.compiler_options() == {"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_DOT"}
    x = jnp.ones((64, 34, 3))
    default = jax.jit(norms).lower(x).compile().as_text()
    crax_s = xla_options.jit(norms).lower(x).compile().as_text()
    assert "__ynn_fusion" in default  # XLA's default hands the reduction to YNNPACK...
    assert "__ynn_fusion" not in crax_s  # ...crax's programs keep it in XLA's own loops
    assert jnp.allclose(xla_options.jit(norms)(x), jnp.sqrt(3.0))


def test_the_users_xla_flags_and_the_switch_leave_xla_defaults(clean_env, monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=-LIBRARY_FUSION_TYPE_REDUCE")
    assert xla_options.compiler_options() is None
    monkeypatch.setenv("XLA_FLAGS", "")
    for off in ("0", "off", "False"):
        monkeypatch.setenv(xla_options.ENV, off)
        assert xla_options.compiler_options() is None
    monkeypatch.setenv(xla_options.ENV, "1")
    assert xla_options.compiler_options() is not None


def test_a_bad_switch_names_the_valid_values(clean_env, monkeypatch):
    monkeypatch.setenv(xla_options.ENV, "maybe")
    with pytest.raises(ValueError, match=r"CRAX_XLA_OPTIONS='maybe' is not a switch; use 1 .* or 0"):
        xla_options.compiler_options()


def test_a_jaxlib_without_the_option_warns_once_and_keeps_xla_defaults(clean_env, monkeypatch):
    monkeypatch.setattr(xla_options, "CPU_OPTIONS", BOGUS)
    xla_options._supported.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="does not take crax's XLA options"):
            assert xla_options.compiler_options() is None
    finally:
        xla_options._supported.cache_clear()


@pytest.fixture
def bogus_options(clean_env, monkeypatch):
    """crax's options replaced by one XLA rejects: a program compiled with them fails to compile, which shows
    they reached it."""
    monkeypatch.setattr(xla_options, "compiler_options", lambda: dict(BOGUS))


def test_the_trainers_programs_carry_the_options(bogus_options):
    trainer = Trainer(PPOLag, tiny(PPOLag.Config), ToyEnv())
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        trainer.init(jax.random.key(0))


def test_the_benchs_programs_carry_the_options(bogus_options):
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        bench._compile(norms, jnp.ones((4, 3)))
