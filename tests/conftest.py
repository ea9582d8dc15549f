"""Test-wide settings: a persistent JAX compilation cache shared by every test process, whole files
per ``pytest -n`` worker, and the heaviest files first."""

import collections
import os
import pathlib

import jax

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
