"""Curriculum (docs/SPEC.md §6): one learner trained on levels 1 → 2 → 3 of a task, the budget split equally.

Every learner and optimizer variable (policy, critics, normalizer, multipliers, Adam state) carries
from one stage to the next; each stage starts fresh envs of its level. It is one run folder: its
``config.json`` lists the stages, every metrics record carries ``curriculum/stage``, and
``results.json`` gives each stage's step range. ``crax train --resume`` continues it like any run.

    crax curriculum ppo-lag --env PointGoal --total-steps 3e6
    crax curriculum ppo-lag --env PointGoal --constraint action_energy:weight=0.05 --budgets cost/action_energy=5 ...
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from crax import runs
from crax.learners.shared.learner import Learner


def stage_ids(env: str, levels: Sequence[int] = (1, 2, 3)) -> list[str]:
    """``["PointGoal1", "PointGoal2", "PointGoal3"]`` from ``"PointGoal"`` (a body+suite without level)."""
    if re.search(r"\d$", env):
        raise ValueError(f"a curriculum takes a body and suite without level (e.g. 'PointGoal'), got {env!r}")
    if len(levels) < 2:
        raise ValueError(f"a curriculum needs at least two levels, got {list(levels)}")
    return [f"{env}{level}" for level in levels]


def curriculum(learner: str | type[Learner], config: Any = None, env: str = "PointGoal", *,
               levels: Sequence[int] = (1, 2, 3), **train_kwargs: Any) -> runs.TrainResult:
    """Trains ``learner`` on ``env`` at each of ``levels`` in turn in one run (see the module docstring).

    ``config.total_steps`` is the whole budget; ``train_kwargs`` go to :func:`crax.runs.training.train`.
    """
    return runs.train(learner, config, stages=stage_ids(env, levels), **train_kwargs)
