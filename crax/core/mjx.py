"""Imports `mujoco.mjx` without the optional-backend notice it prints on stdout.

mujoco-mjx tries to import NVIDIA Warp on import and prints a line when it is absent; crax uses
the JAX implementation unless an env is built with ``physics="warp"`` (:mod:`crax.core.physics`),
so that line is noise in every CLI command.
"""

import contextlib
import io
from typing import cast

import mujoco

with contextlib.redirect_stdout(io.StringIO()):
    import mujoco.mjx as mjx
    from mujoco.mjx._src import forward as mjx_forward  # its RK4 parts (crax.core.physics)
    from mujoco.mjx._src import math as mjx_math  # the kinematics of bodies it does not step (crax.core.physics_model)
    from mujoco.mjx._src import scan as mjx_scan
    from mujoco.mjx._src import support as mjx_support
    from mujoco.mjx.warp import types as _warp_types

WARP_SHARED_FIELDS = frozenset(_warp_types.DATA_NON_VMAP)
"""Fields of the Warp implementation's ``Data._impl`` that every env of a vmapped batch shares (the
contact buffer, its counters and sizes): ``jax.vmap`` leaves them unbatched (mjx's ``DATA_NON_VMAP``)."""

__all__ = ["WARP_SHARED_FIELDS", "jax_impl", "mjx", "mjx_forward", "mjx_math", "mjx_scan", "mjx_support", "mujoco"]


def jax_impl(data: mjx.Data) -> mjx.DataJAX:
    """``data._impl``, typed as the JAX implementation's fields (``cacc``, ``cinert``, ``contact``...).

    ValueError when ``data`` is the Warp implementation's (``physics="warp"``): it keeps contacts in
    one buffer for a whole batch and has no per-env contact list, so a component that reads these
    fields runs on ``physics="jax"`` only (:func:`crax.core.contacts.count` counts contacts on both)."""
    if not isinstance(data._impl, mjx.DataJAX):
        raise ValueError(f"this reads MJX's JAX-implementation data (data._impl: the per-env contact list and its "
                         f"forces, cacc, cinert), which physics='warp' does not keep per env "
                         f"({type(data._impl).__name__}; crax.core.contacts.count counts contacts on both); use "
                         f"physics='jax'")
    return cast(mjx.DataJAX, data._impl)
