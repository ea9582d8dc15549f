"""crax's envs in Gymnasium's registry, under the ``crax/`` namespace.

    import gymnasium
    import crax.gymnasium

    crax.gymnasium.register_envs()                       # once per process; returns the ids
    env = gymnasium.make("crax/PointGoal1")               # crax's task (the paper's)
    env = gymnasium.make("crax/SafetyPointGoal1-v0")      # Safety-Gymnasium's task, as it defines it
    envs = gymnasium.make_vec("crax/PointGoal1", num_envs=1024)   # one CraxVectorEnv, stepped as a batch

Every id of :func:`crax.env_ids` is registered as ``crax/<id>``: crax's own ids without a version,
Safety-Gymnasium's with theirs. ``gymnasium.make`` builds a :class:`~crax.gymnasium.CraxEnv` with
Gymnasium's step (the cost and its terms in ``info``) and Gymnasium's usual wrappers around it; its
keyword arguments are :func:`crax.gymnasium.make`'s (``episode_length=``, task parameters,
``camera=``). ``gymnasium.make_vec`` uses the ``vector_entry_point``: all envs in one jitted batch,
never Gymnasium's per-env sync or async vectorisation. Episodes end where crax ends them, so the
specs carry no ``max_episode_steps``.

Tools that take only an id string can name the module that registers: ``gymnasium.make(
"crax.gymnasium.registered:crax/PointGoal1")`` imports :mod:`crax.gymnasium.registered`, whose
import calls :func:`register_envs` (its only purpose; nothing in crax imports it).
"""

from __future__ import annotations

from collections.abc import Iterable

import gymnasium

NAMESPACE = "crax"


def gymnasium_id(env_id: str) -> str:
    """The Gymnasium id of a crax id: ``PointGoal1`` → ``crax/PointGoal1``."""
    return f"{NAMESPACE}/{env_id}"


def register_envs(env_ids: Iterable[str] | None = None) -> list[str]:
    """Registers ``crax/<id>`` for each of ``env_ids`` (default: every id of :func:`crax.env_ids`,
    plugins' included) that Gymnasium does not hold yet; returns the Gymnasium ids, in order.

    Raises:
      ValueError: an id that is not a crax id, naming the valid ones.
    """
    import crax

    known = crax.env_ids()
    ids = list(known if env_ids is None else env_ids)
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ValueError(f"not crax env ids: {', '.join(map(repr, unknown))}; valid ids: {', '.join(known)}")
    out = []
    for env_id in ids:
        name = gymnasium_id(env_id)
        if name not in gymnasium.registry:
            gymnasium.register(name, entry_point="crax.gymnasium.factory:make",
                               vector_entry_point="crax.gymnasium.factory:make_vector", kwargs={"env_id": env_id})
        out.append(name)
    return out
