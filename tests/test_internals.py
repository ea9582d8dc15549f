"""The upgrade check: every private jax and mujoco-mjx name crax relies on, in one place.

crax reaches into three kinds of internals, each kept in one module: mjx's private modules
(``crax.core.mjx``: the RK4 tableau and stages, the kinematics of bodies the physics model leaves
out, the tree scans), jax's CPU lowerings it re-registers (``crax.devices.lapack``: the batched
Cholesky and triangular solves split into chunks; ``crax.devices.threefry``: the random-number hash
written out), and absl's log level (``crax.devices.startup``). Each falls back quietly when its
internals are gone (a slower program, a louder log, never a wrong number), so after an upgrade of
jax or mujoco this file is what fails and names the name that moved.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from crax.core import mjx as mjx_module
from crax.devices import lapack, threefry

ROOT = Path(__file__).resolve().parents[1]

PRIVATE_MJX_MODULES = ("mjx_forward", "mjx_math", "mjx_scan", "mjx_support")


def _private_attributes_used() -> set[tuple[str, str]]:
    """``(module alias, attribute)`` for every ``mjx_forward.x``-style use in crax's source."""
    used = set()
    for path in (ROOT / "crax").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in PRIVATE_MJX_MODULES):
                used.add((node.value.id, node.attr))
    return used


def test_every_private_mjx_name_crax_uses_exists():
    used = _private_attributes_used()
    assert ("mjx_forward", "rungekutta4") in used  # the scan finds the uses (crax.core.stepping)
    missing = sorted(f"{m}.{a}" for m, a in used if not hasattr(getattr(mjx_module, m), a))
    assert not missing, f"mujoco-mjx no longer has {missing}: see crax/core/mjx.py and its users"


def test_private_mjx_modules_are_imported_only_through_crax_core_mjx():
    """One home: no other crax module imports ``mujoco.mjx._src`` itself."""
    others = [str(p.relative_to(ROOT)) for p in (ROOT / "crax").rglob("*.py")
              if p.name != "mjx.py" and "mujoco.mjx._src" in p.read_text().replace("``mjx._src", "")]
    assert not others


def test_the_re_registered_cpu_lowerings_are_active_on_this_jax():
    assert lapack.install(), "crax.devices.lapack's internals moved: batched MJX steps may deadlock XLA:CPU"
    assert threefry.install(), "crax.devices.threefry's internals moved: CPU env steps lose the unrolled hash"


@pytest.mark.parametrize("module, path", [("jax._src.lib", "utils.absl_set_min_log_level"),
                                          ("jax._src.interpreters.mlir", "register_lowering"),
                                          ("jax._src.interpreters.mlir", "lower_fun")])
def test_jax_internals_crax_calls_exist(module, path):
    """As crax imports them (``from jax._src.lib import utils`` is an attribute, not a module)."""
    obj = importlib.import_module(module)
    for name in path.split("."):
        obj = getattr(obj, name)
    assert callable(obj)
