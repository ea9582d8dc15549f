"""XLA compile options that crax passes to the programs it compiles, one program at a time.

On a CPU, XLA hands dot products *and reductions* to YNNPACK's library fusions by default. An MJX
step's reductions are over 3- and 4-vectors (quaternion products, rotations, norms) repeated across
every body, geom and env of a batch, which YNNPACK runs several times slower than XLA's own loops,
enough to be most of PointGoal1's kinematics. So crax compiles its programs with YNNPACK keeping the
dots only (:data:`CPU_OPTIONS`; docs/DECISIONS.md, decision 70; the measurements are in
docs/performance.md, "XLA options").

The options go to ``jax.jit(..., compiler_options=...)`` of the programs crax compiles (:func:`jit`):
the ``Trainer``'s (training and evaluation), the rollouts of ``crax bench``, the Gymnasium faces, a
policy loaded from a run, rendering. Nothing is set process-wide, so a program a user compiles around
``env.step`` keeps XLA's defaults (pass :func:`compiler_options` to its ``jax.jit`` to get the same).
They apply only when jax's default backend is the CPU, and not at all when the user's ``XLA_FLAGS``
names the option (the user's setting wins) or ``CRAX_XLA_OPTIONS=0``.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from typing import Any

from crax.devices import settings

ENV = settings.XLA_OPTIONS.name
YNN_FUSION_TYPE = "xla_cpu_experimental_ynn_fusion_type"
CPU_OPTIONS = {YNN_FUSION_TYPE: "LIBRARY_FUSION_TYPE_DOT"}
"""XLA:CPU options of crax's programs: YNNPACK fuses dots, XLA emits the reductions itself."""


@functools.cache
def _supported() -> bool:
    """Whether this jaxlib's XLA knows :data:`CPU_OPTIONS` (a newer one may rename them): a one-line program
    compiled with them on the default (CPU) backend, once per process."""
    import jax

    try:
        jax.jit(lambda x: x + 1, compiler_options=CPU_OPTIONS).lower(0.0).compile()
    except Exception as e:  # jaxlib says "No such compile option" as a JaxRuntimeError
        warnings.warn(f"this jaxlib does not take crax's XLA options {CPU_OPTIONS} ({e}); crax's programs use XLA's "
                      f"defaults (set {ENV}=0 to silence this)", RuntimeWarning, stacklevel=3)
        return False
    return True


def compiler_options() -> dict[str, str] | None:
    """The ``compiler_options`` crax's programs compile with: :data:`CPU_OPTIONS` when jax's default
    backend is the CPU, None (XLA's defaults) on other backends, when ``XLA_FLAGS`` names
    ``--xla_cpu_experimental_ynn_fusion_type`` or when ``CRAX_XLA_OPTIONS=0``.

    Raises:
      ValueError: ``CRAX_XLA_OPTIONS`` is set to something other than a switch (1/0, on/off...).
    """
    if (not settings.switch(settings.XLA_OPTIONS)
            or YNN_FUSION_TYPE in os.environ.get("XLA_FLAGS", "")):
        return None
    import jax

    if jax.default_backend() != "cpu" or not _supported():
        return None
    return dict(CPU_OPTIONS)


def jit(fn: Callable, **kwargs: Any) -> Any:
    """``jax.jit(fn, **kwargs)`` with :func:`compiler_options` (read now, when the program is defined)."""
    import jax

    return jax.jit(fn, compiler_options=compiler_options(), **kwargs)
