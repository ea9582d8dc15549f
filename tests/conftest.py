"""Test-wide settings: XLA compile options for a compile-bound suite, a persistent JAX compilation
cache shared by every test process, whole files per ``pytest -n`` worker, and the heaviest files first."""

import collections
import gc
import os
import pathlib
import sys

# Machine images that set PYTHONDONTWRITEBYTECODE=1 make every test process (the controller and each
# `pytest -n` worker) compile crax from source and rewrite every test module's asserts again: about
# half of collection's time. Bytecode under __pycache__ (git-ignored) is harmless for a test run.
sys.dont_write_bytecode = False

TEST_XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false",
                  "--xla_llvm_disable_expensive_passes=true")
"""XLA options for the test processes (and the subprocesses they start), not for crax's users.

The suite spends most of its time compiling programs it then runs for a few steps: with the first
two options a learner's iteration compiled 3x faster and a PointGoal1 step 2.5x (a rollout then ran
4.6x slower, which a test barely feels); the third (what ``jax_disable_most_optimizations`` adds to
them) took a Safety-Gymnasium Humanoid's step from 37 s to 28 s of compiling and an Ant Button's
from 27 s to 20 s, tests/learners/test_off_policy.py from 72 s to 65 s. All three change how XLA
emits CPU code, not what it computes.
A flag the caller's own ``XLA_FLAGS`` already names is kept; ``CRAX_TEST_XLA_DEFAULTS=1`` runs the
tests with XLA's defaults instead (e.g. to check a codegen-sensitive result).
"""
TEST_RK4_STAGES = "rolled"
"""``CRAX_RK4_STAGES`` for the test processes (and their subprocesses): an RK4 model's forward passes
(each step's own and its three stages') compiled as one loop (crax.core.physics, decisions 63 and 64):
MJX's arithmetic to float32 rounding (tests/env/test_physics.py). Session 23, trace and compile of
one step: a Safety-Gymnasium Humanoid's 10.5 s, the Ant Goal's 9.5 s, against 31 s and 33 s with
session 22's loop of the stages alone (MJX's unrolled stages: 36 s and 35 s of compiling alone). A value the caller sets is kept; ``CRAX_TEST_XLA_DEFAULTS=1`` leaves
MJX's unrolled stages too."""
if os.environ.get("CRAX_TEST_XLA_DEFAULTS", "0") in ("", "0"):
    _flags = os.environ.get("XLA_FLAGS", "")
    _add = [f for f in TEST_XLA_FLAGS if f.split("=")[0] not in _flags]
    os.environ["XLA_FLAGS"] = " ".join([_flags, *_add]).strip()
    os.environ.setdefault("CRAX_RK4_STAGES", TEST_RK4_STAGES)

TEST_GC_THRESHOLD = (700, 10, 100)
"""Python's collector thresholds in the test processes: a full collection every 100 second-generation
ones instead of 10. A worker keeps what its tests traced and compiled (the shared envs, JAX's caches),
so each full collection walks a heap that grows through the run: on three heavy files (54 tests)
the full collections took 10.5 s of 187 (gc.callbacks), 5.5 s with this setting, for a peak of
2.4 GB. The first two generations keep Python's defaults."""
gc.set_threshold(*TEST_GC_THRESHOLD)

import jax  # noqa: E402  (after XLA_FLAGS: read when JAX starts its backends)

CACHE = pathlib.Path(os.environ.get("CRAX_TEST_CACHE", pathlib.Path(__file__).resolve().parent.parent / ".jax_cache"))
jax.config.update("jax_compilation_cache_dir", str(CACHE))
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(CACHE))  # test subprocesses too (crax/devices/startup.py honours it)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def pytest_configure(config):
    # Under `pytest -n 2` (implied `--dist load`) the tests of one file would be spread over both
    # workers, and each worker would compile the file's shared programs (module fixtures, the
    # `compiled` envs of tests/env/conftest.py): hand out whole files instead. (`--dist loadgroup` cannot
    # do this: pytest-xdist 3.8 tags the group onto `item._nodeid`, which pytest 9 no longer reads.)
    # An explicit `--dist` wins. Files go out in the order pytest_collection_modifyitems leaves them.
    explicit = any(a == "-d" or a.startswith("--dist") for a in config.invocation_params.args)
    if getattr(config.option, "dist", None) == "load" and not explicit:
        config.option.dist = "loadfile"
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(session, config, items):
    # Files with slow tests first (notebooks, learning runs, fresh processes: minutes each), so that the
    # last files handed out are short ones and neither worker idles while the other finishes a long one.
    slow = collections.Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])  # stable: the order within a file is kept
