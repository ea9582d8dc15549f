"""crax's settings that are not arguments, declared once: its ``CRAX_*`` environment variables (name,
default, meaning, valid values) and the physics implementations an env can step on.

Every module reads its variable through :func:`read` (or :func:`switch`), so a bad value is the same
ValueError everywhere: it names the variable, its value and the valid values with what they mean.
A variable is read when its setting is applied (see each one's ``read_at``), never at import.
This module imports nothing heavier than the standard library (the ``crax`` command's flags use it).
"""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Callable
from typing import Literal

Physics = Literal["jax", "warp"]
"""MJX's implementations an env can step on: its JAX implementation and its Warp implementation
(``crax.make(id, physics=...)``, ``--physics``)."""

PHYSICS: tuple[Physics, ...] = typing.get_args(Physics)
"""Valid values of ``physics``, in the order of :data:`Physics`."""

PHYSICS_HELP = ("MJX implementation that steps the env: jax, or warp (NVIDIA Warp on a CUDA GPU or the CPU, "
                "one device; pip install 'crax[warp]')")
"""What ``physics`` picks, for ``crax.make``'s parameter table and the commands' ``--physics``."""

_SWITCH = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


@dataclasses.dataclass(frozen=True)
class EnvVar:
    """One environment variable of crax."""

    name: str
    default: str | Callable[[], str]
    """The value when the variable is unset or empty (a callable: computed when read)."""
    meaning: str
    """What it sets."""
    valid: tuple[str, ...] | None
    """Its valid values (compared lower-cased, spaces stripped), or None: ``check`` decides."""
    values: str
    """The valid values and what they do, as the ValueError of a bad value says them."""
    read_at: str
    """Where crax reads it."""
    check: Callable[[str], bool] | None = None
    """For ``valid=None``: whether a value (stripped) is valid."""

    def raw(self) -> str:
        """The variable's value as set (stripped; the default when unset or empty)."""
        value = os.environ.get(self.name, "").strip()
        return value or (self.default() if callable(self.default) else self.default)


def _switch(name: str, on: str, off: str, meaning: str, read_at: str, hint: str = "") -> EnvVar:
    return EnvVar(name, "1", meaning, tuple(_SWITCH), f"use 1 (the default: {on}) or 0 ({off}){hint}", read_at)


COMPILE_CACHE = _switch("CRAX_COMPILE_CACHE", "cache compiled programs", "off",
                        "JAX's persistent compilation cache in $XDG_CACHE_HOME/crax/jax",
                        "crax.devices.startup.compile_cache", ". To move the cache, set JAX_COMPILATION_CACHE_DIR")
HOST_DEVICES = EnvVar(
    "CRAX_HOST_DEVICES", lambda: str(os.cpu_count() or 1), "XLA host devices of the CPU (data-parallel batches)",
    None, "must be a whole number >= 1 (XLA host devices of the CPU; 1: a single device)",
    "crax.devices.startup.host_devices", check=lambda v: v.isdigit() and int(v) >= 1)
UNROLL_THREEFRY = _switch("CRAX_UNROLL_THREEFRY", "jax's random-number hash written out on a CPU",
                          "jax's looped lowering", "Threefry-2x32 as straight-line code on XLA:CPU",
                          "crax.devices.startup.configure_jax")
SPLIT_LAPACK = _switch("CRAX_SPLIT_LAPACK", "batched Cholesky and triangular solves split into calls that never "
                       "wait on XLA:CPU's thread pool", "jax's own lowerings",
                       "the LAPACK batch split of crax.devices.lapack", "crax.devices.lapack.install")
XLA_OPTIONS = _switch("CRAX_XLA_OPTIONS", "crax's XLA options on a CPU, {'xla_cpu_experimental_ynn_fusion_type': "
                      "'LIBRARY_FUSION_TYPE_DOT'}", "XLA's own defaults",
                      "the XLA:CPU compile options of crax's programs", "crax.devices.xla_options.compiler_options")
RK4_STAGES = EnvVar(
    "CRAX_RK4_STAGES", "unrolled", "how an RK4 model's steps are compiled", ("unrolled", "rolled"),
    "must be one of unrolled, rolled: unrolled is MJX's own RK4 step, rolled runs its forward passes in one "
    "loop (the same arithmetic, faster to compile)", "crax.core.stepping.rk4_stages (when a step is traced)")

DISABLE_PLUGIN_AUTOLOAD = EnvVar(
    "CRAX_DISABLE_PLUGIN_AUTOLOAD", "0", "load only crax's built-in plugin, not the installed ones",
    tuple(_SWITCH), "use 0 (the default: every installed plugin is loaded) or 1 (only crax's own)",
    "crax.plugins.manager.plugin_manager")

ENV_VARS: tuple[EnvVar, ...] = (COMPILE_CACHE, HOST_DEVICES, UNROLL_THREEFRY, SPLIT_LAPACK, XLA_OPTIONS, RK4_STAGES,
                                DISABLE_PLUGIN_AUTOLOAD)
"""Every ``CRAX_*`` environment variable that crax reads."""


def read(var: EnvVar) -> str:
    """``var``'s value (lower-cased, stripped; its default when unset or empty).

    Raises:
      ValueError: the value is not one of ``var``'s valid values; the message names the variable, the value
        and the valid values.
    """
    value = var.raw().lower()
    if (value not in var.valid) if var.valid is not None else not (var.check and var.check(value)):
        is_switch = var.valid == tuple(_SWITCH)
        raise ValueError(f"environment variable {var.name}={os.environ.get(var.name, '')!r} "
                         f"{'is not a switch; ' if is_switch else ''}{var.values}")
    return value


def switch(var: EnvVar) -> bool:
    """An on/off variable (1/0, true/false, yes/no, on/off; unset: on) read as a bool (ValueError: :func:`read`)."""
    return _SWITCH[read(var)]


__all__ = ["COMPILE_CACHE", "DISABLE_PLUGIN_AUTOLOAD", "ENV_VARS", "HOST_DEVICES", "PHYSICS", "RK4_STAGES", "SPLIT_LAPACK", "UNROLL_THREEFRY",
           "XLA_OPTIONS", "EnvVar", "Physics", "read", "switch"]
