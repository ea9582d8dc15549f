"""crax: safe reinforcement learning on MuJoCo MJX.

    import crax
    env = crax.make("PointGoal1")
    state = env.reset(jax.random.key(0))
    state = env.step(state, action)   # state.reward, state.cost, state.done, ...

    crax.env_ids()                    # every valid id; crax.parse_id(id) -> (body, suite, level)
    crax.parameters("PointGoal1")     # what crax.make accepts for an id: defaults, valid ranges
    crax.names()                      # registered components by kind (built-ins and plugins)

Plugins (third-party bodies, sensors, hazards, constraints, suites, learners): docs/plugins.md.
The layout of the package, layer by layer, is drawn in docs/architecture.md.

Importing crax changes nothing process-wide: ``crax.make``, the ``Trainer`` and every ``crax``
command apply JAX's settings where they start work (:mod:`crax.devices.startup`: the persistent
compilation cache, one host device per CPU core, the LAPACK batch split), each with its opt-out.
The names below are looked up on first use, so ``import crax`` loads no layer it does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "Env": "crax.core.env", "State": "crax.core.env", "wrap_for_training": "crax.core.env",
    "hookimpl": "crax.plugins", "registry": "crax.plugins",
    "env_ids": "crax.tasks.catalog", "make": "crax.tasks.catalog", "parameters": "crax.tasks.catalog",
    "parse_id": "crax.tasks.catalog", "names": "crax.tasks.catalog",
}

__all__ = [
    "Env", "State", "__version__", "env_ids", "hookimpl", "make", "names", "parameters", "parse_id", "registry",
    "wrap_for_training",
]

if TYPE_CHECKING:
    from crax.core.env import Env, State, wrap_for_training
    from crax.plugins import hookimpl, registry
    from crax.tasks.catalog import env_ids, make, names, parameters, parse_id


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'crax' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
