"""crax: safe reinforcement learning on MuJoCo MJX.

    import crax
    env = crax.make("PointGoal1")
    state = env.reset(jax.random.key(0))
    state = env.step(state, action)   # state.reward, state.cost, state.done, ...

    crax.env_ids()                    # every valid id; crax.parse_id(id) -> (body, suite, level)
    crax.parameters("PointGoal1")     # what crax.make accepts for an id: defaults, valid ranges
    crax.names()                      # registered components by kind (built-ins and plugins)

Plugins (third-party bodies, sensors, hazards, constraints, suites, learners): docs/plugins.md.

``crax.make`` turns on JAX's persistent compilation cache (``~/.cache/crax/jax``) and asks XLA for
one host device per CPU core; both are documented in :mod:`crax.startup`, with their opt-outs.
"""

# Batched MJX steps with contacts deadlock XLA:CPU's thread pool inside jaxlib's LAPACK kernels;
# split their batches so every call runs inline (see crax/_lapack.py; opt out: CRAX_SPLIT_LAPACK=0).
from crax import _lapack  # noqa: E402

_lapack.install()

from crax.env import Env, State, wrap_for_training  # noqa: E402
from crax.plugins import hookimpl, registry  # noqa: E402
from crax.tasks import env_ids, make, parameters, parse_id  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Env", "State", "__version__", "env_ids", "hookimpl", "make", "names", "parameters", "parse_id", "registry",
    "wrap_for_training",
]


def names() -> dict[str, list[str]]:
    """Registered component names by kind (bodies, sensors, hazards, constraints, suites, learners)."""
    from crax.plugins.manager import KINDS

    reg = registry()
    return {kind: sorted(reg.table(kind)) for kind in KINDS}
