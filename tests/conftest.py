"""Test-wide settings: a persistent JAX compilation cache shared by every test process."""

import os
import pathlib

import jax

CACHE = pathlib.Path(os.environ.get("CRAX_TEST_CACHE", pathlib.Path(__file__).resolve().parent.parent / ".jax_cache"))
jax.config.update("jax_compilation_cache_dir", str(CACHE))
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(CACHE))  # test subprocesses too (crax/devices/startup.py honours it)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
