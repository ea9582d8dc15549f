"""Imports `mujoco.mjx` without the optional-backend notice it prints on stdout.

mujoco-mjx tries to import NVIDIA Warp on import and prints a line when it is absent; crax uses
the JAX implementation (``impl="jax"``), so that line is noise in every CLI command.
"""

import contextlib
import io

import mujoco

with contextlib.redirect_stdout(io.StringIO()):
    import mujoco.mjx as mjx

__all__ = ["mjx", "mujoco"]
