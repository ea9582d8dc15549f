# Local stub for mujoco (pyproject.toml's [tool.pyright] stubPath points here).
#
# mujoco's Python bindings are compiled pybind11 modules (mujoco._structs, _specs, _enums,
# _functions, ...) that it star-imports into the package and ships without .pyi stubs, so pyright
# sees none of MjModel, MjData, MjSpec, the mjt* enums or the mj_* functions. This stub makes
# every attribute of the top-level module Any instead of an error. Submodules written in Python
# (mujoco.mjx above all; import it as `import mujoco.mjx as mjx`) keep their own types.
from typing import Any

def __getattr__(name: str) -> Any: ...
