"""Process-wide JAX settings that crax applies where it starts work, never at ``import crax``.

:func:`configure_jax` runs at the top of ``crax.make`` and of the ``Trainer``, and first in every
``crax`` command (inside :func:`command_line`). Each setting leaves alone whatever the user set:

* **Persistent compilation cache** (:func:`compile_cache`): compiled XLA programs go to
  ``$XDG_CACHE_HOME/crax/jax`` (``~/.cache/crax/jax`` without it), so the minutes a CPU spends
  compiling an env's step are spent once per machine, not once per process (every sweep cell and
  worker process included). A cache directory set through ``JAX_COMPILATION_CACHE_DIR`` or
  ``jax.config.update("jax_compilation_cache_dir", ...)`` wins; ``CRAX_COMPILE_CACHE=0`` turns it off.
* **Host devices** (:func:`host_devices`): ``--xla_force_host_platform_device_count=<cores>`` in
  ``XLA_FLAGS``, so a CPU shows one device per core and batched envs can run data-parallel
  (``crax.devices.sharding``). XLA reads the flag when JAX starts its backends, so it only takes effect
  when crax starts work before the program's first JAX computation. ``CRAX_HOST_DEVICES=<n>``
  picks another count (1: no flag); a count already in ``XLA_FLAGS`` is kept.
* **XLA's C++ log** (:func:`quiet_xla_log`, the command line only): XLA logs "Very slow compile?
  If you want to file a bug, ..." at error level when a compile passes two minutes, which on a
  CPU is most compiles of a MuJoCo step. The command line keeps that log off the console unless
  ``TF_CPP_MIN_LOG_LEVEL`` is set to 0 (everything) or 2 (errors).
* **LAPACK batch split** (:mod:`crax.devices.lapack`): batched Cholesky and triangular solves on
  XLA:CPU split into calls that never wait on the intra-op thread pool (which deadlocks MJX steps
  with contacts at large batches). ``TaskEnv`` also installs it, for envs built without
  ``crax.make``. ``CRAX_SPLIT_LAPACK=0`` keeps jax's own lowerings.
* **Threefry written out** (:mod:`crax.devices.threefry`): jax's random-number hash runs on XLA:CPU
  as straight-line code instead of a loop (the same bits, faster draws and key splits).
  ``CRAX_UNROLL_THREEFRY=0`` keeps jax's own lowering.

The ``CRAX_*`` variables (defaults, valid values) are declared in :mod:`crax.devices.settings`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

from crax.devices import lapack, settings, threefry

CACHE_ENV = settings.COMPILE_CACHE.name
HOST_DEVICES_ENV = settings.HOST_DEVICES.name
THREEFRY_ENV = settings.UNROLL_THREEFRY.name
_HOST_DEVICE_FLAG = "--xla_force_host_platform_device_count"

_notice = {"enabled": False, "said": False}
"""Whether the command line asked for the compile notice, and whether this process has said it."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/crax/jax``, or ``~/.cache/crax/jax`` when XDG_CACHE_HOME is unset or empty."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "crax" / "jax"


def _cache_wanted() -> bool:
    return settings.switch(settings.COMPILE_CACHE)


def compile_cache() -> str | None:
    """Turns on JAX's persistent compilation cache in :func:`default_cache_dir` unless the user set a
    directory or ``CRAX_COMPILE_CACHE=0``; returns the directory in use (None: no cache, with a
    warning when the directory cannot be made). Idempotent."""
    import jax

    # jax adds its options to jax.config as properties at runtime, so a type checker sees none
    current = jax.config.jax_compilation_cache_dir  # pyright: ignore[reportAttributeAccessIssue]
    if current or not _cache_wanted():
        return current or None
    path = default_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a read-only home must not stop the work: it only costs the compiles
        warnings.warn(f"crax cannot create its compile cache directory {path} ({e.strerror}), so compiled "
                      f"programs are not cached; set JAX_COMPILATION_CACHE_DIR to a writable directory, or "
                      f"{CACHE_ENV}=0 to silence this", RuntimeWarning, stacklevel=2)
        return None
    # JAX opens the cache at the first compile that finds a directory set, so programs compiled
    # before this one simply were not cached.
    jax.config.update("jax_compilation_cache_dir", str(path))
    return str(path)


def host_devices() -> None:
    """Adds the host device count (``CRAX_HOST_DEVICES``, default every core) to ``XLA_FLAGS`` unless
    ``XLA_FLAGS`` has one or the count is 1. Idempotent; no effect once JAX has started its backends."""
    flags = os.environ.get("XLA_FLAGS", "")
    if _HOST_DEVICE_FLAG in flags:
        return
    count = int(settings.read(settings.HOST_DEVICES))
    if count > 1:
        os.environ["XLA_FLAGS"] = f"{flags} {_HOST_DEVICE_FLAG}={count}".strip()


def configure_jax() -> None:
    """:func:`host_devices`, :func:`compile_cache`, the LAPACK batch split (:mod:`crax.devices.lapack`,
    opt out with ``CRAX_SPLIT_LAPACK=0``) and Threefry written out (:mod:`crax.devices.threefry`, opt
    out with ``CRAX_UNROLL_THREEFRY=0``). Idempotent."""
    host_devices()
    compile_cache()
    lapack.install()
    if settings.switch(settings.UNROLL_THREEFRY):
        threefry.install()


def quiet_xla_log() -> None:
    """Keeps XLA's C++ log (its "Very slow compile?" banners among it) off stderr, unless the user
    set ``TF_CPP_MIN_LOG_LEVEL`` to other than 1 (``import jax`` sets 1 when it is unset). jaxlib
    reads that variable only when it loads (``import crax`` has loaded it by now), so this sets
    absl's level directly, which takes effect at once."""
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "1") != "1":
        return
    try:
        from jax._src.lib import utils  # pyright: ignore[reportPrivateImportUsage]  (jax internals, on purpose)
    except ImportError:
        return
    with contextlib.suppress(AttributeError):
        utils.absl_set_min_log_level(3)  # fatal only


def under_command_line() -> bool:
    """Whether a ``crax`` command is running in this process (inside :func:`command_line`)."""
    return _notice["enabled"]


def announce_compile() -> None:
    """Under the command line (:func:`command_line`), once per process: says on stderr that a compile
    follows (``crax.make`` calls this once the env is built, the ``Trainer`` when it starts)."""
    if _notice["enabled"] and not _notice["said"]:
        _notice["said"] = True
        import jax

        cache_dir = jax.config.jax_compilation_cache_dir  # pyright: ignore[reportAttributeAccessIssue]
        cached = "cached afterwards" if cache_dir else "the compile cache is off"
        print(f"crax: compiling (first call takes minutes on a CPU; {cached})", file=sys.stderr, flush=True)


def start_work() -> None:
    """Where crax starts work (the ``Trainer``): :func:`configure_jax` and :func:`announce_compile`."""
    configure_jax()
    announce_compile()


@contextlib.contextmanager
def command_line() -> Iterator[None]:
    """Around a ``crax`` command (which calls :func:`configure_jax` first, where its errors are
    reported): :func:`quiet_xla_log`, and the compile notice of :func:`announce_compile` while it runs."""
    quiet_xla_log()
    enabled = _notice["enabled"]
    _notice["enabled"] = True
    try:
        yield
    finally:
        _notice["enabled"] = enabled
