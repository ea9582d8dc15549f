"""What a run trains: learners by name and envs by id (registered ids or ``module:EnvClass`` paths)."""

from __future__ import annotations

import importlib
from typing import Any

from crax.core.env import Env
from crax.learners.families import family, make_trainer
from crax.learners.shared.learner import Learner
from crax.learners.shared.trainer import BaseTrainer


def learners() -> dict[str, type[Learner]]:
    """Every registered learner (built-in and from installed plugins), by name."""
    from crax.plugins import registry

    return dict(registry().learners)


def get_learner(learner: str | type[Learner]) -> type[Learner]:
    """A learner class from its registered name (ValueError listing the valid names) or the class itself."""
    if isinstance(learner, type):
        from crax.plugins import registry

        family(learner, registry().families())  # ValueError naming the families
        return learner
    from crax.plugins import registry

    return registry().get("learners", learner)


def trainer_for(learner_cls: type[Learner], config: Any, env: Env) -> BaseTrainer:
    """The trainer of ``learner_cls``'s family, among every registered family (the plugins' too)."""
    from crax.plugins import registry

    return make_trainer(learner_cls, config, env, families=registry().families())


def env_class(env_id: str) -> type[Env]:
    """The :class:`Env` subclass named by a ``package.module:EnvClass`` id (ValueError otherwise)."""
    module_name, _, attr = env_id.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot import env class {env_id!r}: {e}") from None
    if not (isinstance(cls, type) and issubclass(cls, Env)):
        raise ValueError(f"{env_id!r} is not a crax.core.env.Env subclass")
    return cls


def make_env(env_id: str, env_kwargs: dict[str, Any] | None = None) -> Env:
    """``crax.make(env_id, **env_kwargs)``, ``EnvClass(**env_kwargs)`` for ``module:EnvClass`` ids, or a
    multi-agent task for a multi-agent id (:func:`crax.tasks.multi_agent.make_ma_id`)."""
    env_kwargs = dict(env_kwargs or {})
    if ":" in env_id:
        return env_class(env_id)(**env_kwargs)
    from crax.tasks import multi_agent

    if env_id in multi_agent.ma_ids():
        return multi_agent.make_ma_id(env_id, **env_kwargs)
    import crax

    return crax.make(env_id, **env_kwargs)


def env_label(env: str | Env) -> str:
    if isinstance(env, str):
        return env
    return f"{type(env).__module__}:{type(env).__qualname__}"


def check_components_target(env_id: str, env_kwargs: dict[str, Any] | None) -> None:
    """ValueError when added components (``constraints``/``sensors``) meet a ``module:EnvClass`` env."""
    if env_kwargs and ":" in env_id:
        raise ValueError(f"constraints and sensors (--constraint, --sensor) are added to registered env ids "
                         f"(crax.make), not to the env class {env_id!r}")

