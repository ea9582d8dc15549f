"""The learner families and the trainer that runs each: the one place that maps a learner class to
its training loop (the runs layer, studies and the CLI ask here)."""

from __future__ import annotations

from typing import Any

from crax.core.env import Env
from crax.devices import distributed
from crax.learners.off_policy.family import OffPolicyLearner
from crax.learners.off_policy.trainer import OffPolicyTrainer
from crax.learners.on_policy.family import ConstrainedPPO
from crax.learners.on_policy.trainer import Trainer
from crax.learners.shared.learner import Learner
from crax.learners.shared.trainer import BaseTrainer

FAMILIES: dict[type[Learner], type[BaseTrainer]] = {ConstrainedPPO: Trainer, OffPolicyLearner: OffPolicyTrainer}
"""Each family's base learner class and its trainer: a learner is trained by its family's."""


def family(learner_cls: type, families: dict[type, type] | None = None) -> type[Learner]:
    """The family base class of a learner class among ``families`` (default: crax's own; the registry's
    ``families()`` adds the plugins'); ValueError naming the families otherwise."""
    families = FAMILIES if families is None else families
    for base in families:
        if isinstance(learner_cls, type) and issubclass(learner_cls, base):
            return base
    names = ", ".join(f"{b.__module__}.{b.__qualname__}" for b in families)
    raise ValueError(f"{getattr(learner_cls, '__qualname__', learner_cls)!r} is not a learner of a crax family; a "
                     f"learner subclasses one of {names}")


def make_trainer(learner_cls: type[Learner], config: Any, env: Env,
                 devices: list[distributed.Device] | None = None,
                 families: dict[type, type] | None = None) -> BaseTrainer:
    """The trainer of ``learner_cls``'s family (among ``families``, default crax's own) for ``config`` on ``env``."""
    families = FAMILIES if families is None else families
    return families[family(learner_cls, families)](learner_cls, config, env, devices)
