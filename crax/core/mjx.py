"""Imports `mujoco.mjx` without the optional-backend notice it prints on stdout.

mujoco-mjx tries to import NVIDIA Warp on import and prints a line when it is absent; crax uses
the JAX implementation (``impl="jax"``), so that line is noise in every CLI command.
"""

import contextlib
import io
from typing import cast

import mujoco

with contextlib.redirect_stdout(io.StringIO()):
    import mujoco.mjx as mjx

__all__ = ["jax_impl", "mjx", "mujoco"]


def jax_impl(data: mjx.Data) -> mjx.DataJAX:
    """``data._impl``, typed as the JAX implementation's fields (``cacc``, ``cinert``, ``cfrc_ext``...):
    crax puts every model with ``impl="jax"``; mjx types ``_impl`` as the union of its backends."""
    return cast(mjx.DataJAX, data._impl)
