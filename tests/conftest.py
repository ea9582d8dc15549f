"""Test-wide settings: a persistent JAX compilation cache shared by every test process."""

import os
import pathlib

import jax

CACHE = pathlib.Path(os.environ.get("CRAX_TEST_CACHE", pathlib.Path(__file__).resolve().parent.parent / ".jax_cache"))
jax.config.update("jax_compilation_cache_dir", str(CACHE))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
