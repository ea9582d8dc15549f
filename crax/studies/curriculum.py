"""Curriculum (docs/SPEC.md §6): one learner trained on levels 1 → 2 → 3 of a task, the budget split equally.

Every learner and optimizer variable (policy, critics, normalizer, multipliers, Adam state) carries
from one stage to the next; each stage starts fresh envs of its level. It is one run folder: its
``config.json`` lists the stages, every metrics record carries ``curriculum/stage``, and
``results.json`` gives each stage's step range. ``crax train --resume`` continues it like any run.

    crax curriculum ppo-lag --env PointGoal --total-steps 3e6
    crax curriculum ppo-lag --env PointGoal --constraint action_energy:weight=0.05 --budgets cost/action_energy=5 ...
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import tyro

from crax import runner
from crax.learners.base import ConstrainedPPO, PPOConfig


def stage_ids(env: str, levels: Sequence[int] = (1, 2, 3)) -> list[str]:
    """``["PointGoal1", "PointGoal2", "PointGoal3"]`` from ``"PointGoal"`` (a body+suite without level)."""
    if re.search(r"\d$", env):
        raise ValueError(f"a curriculum takes a body and suite without level (e.g. 'PointGoal'), got {env!r}")
    if len(levels) < 2:
        raise ValueError(f"a curriculum needs at least two levels, got {list(levels)}")
    return [f"{env}{level}" for level in levels]


def curriculum(learner: str | type[ConstrainedPPO], config: PPOConfig | None = None, env: str = "PointGoal", *,
               levels: Sequence[int] = (1, 2, 3), **train_kwargs: Any) -> runner.TrainResult:
    """Trains ``learner`` on ``env`` at each of ``levels`` in turn in one run (see the module docstring).

    ``config.total_steps`` is the whole budget; ``train_kwargs`` go to :func:`crax.runner.train`.
    """
    return runner.train(learner, config, stages=stage_ids(env, levels), **train_kwargs)


_LEVELS = ("levels", Annotated[tuple[int, ...], tyro.conf.arg(help="Levels, in training order.")],
           dataclasses.field(default=(1, 2, 3)))


def curriculum_main(argv: list[str]) -> None:
    """``crax curriculum <learner> --env PointGoal [--levels 1 2 3] [config flags]``."""
    prog = "crax curriculum"
    cls, config, args = runner.parse_learner_command(
        argv, prog, "Train a learner on levels 1 -> 2 -> 3 of a task, carrying all its state.",
        extra=(_LEVELS, *runner.COMPONENT_FLAGS))
    result = runner.run_or_exit(prog, lambda: curriculum(
        cls, config, args.env, levels=args.levels, run_dir=None if args.run_dir is None else Path(args.run_dir),
        runs_root=args.runs_root, env_kwargs=runner.env_kwargs_of(args), progress=None if args.progress else False))
    runner.print_final(result)
