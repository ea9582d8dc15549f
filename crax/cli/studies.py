"""The study commands: ``crax sweep``, ``table``, ``plot`` (tyro dataclasses with ``run()``), ``curriculum`` and ``transfer``."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import textwrap
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import tyro

from crax.cli import train as train_cli
from crax.cli.common import Steps
from crax.learners.on_policy.family import PPOConfig
from crax.learners.shared.config import EvalPolicy
from crax.studies.curriculum import curriculum
from crax.studies.transfer import transfer

_OVERRIDES = ("total_steps", "num_envs", "batch_size", "num_minibatches", "unroll_length", "num_epochs",
              "learning_rate", "entropy_cost", "actor_hidden", "critic_hidden", "num_evals", "eval_envs",
              "eval_policy", "seed", "iterations_per_call", "checkpoint_every", "num_devices", "budgets")
"""Learner config fields that ``crax sweep`` has a flag of its own for (any other: ``--set FIELD=VALUE``). Their
types and help are :data:`_OVERRIDES_FROM`'s, each flag optional (None: each learner's default)."""

_OVERRIDES_FROM = PPOConfig
"""The config class that declares every field of :data:`_OVERRIDES` (the run's and the constraint's fields are
every learner's; the batch layout's, the optimiser's and the networks' are the PPO family's)."""


def _field_docs(cls: type) -> dict[str, str]:
    """The docstrings under the fields of ``cls`` and of its dataclass bases (the nearest class's first)."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(base):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(base))).body[0]
        assert isinstance(body, ast.ClassDef)
        for stmt, after in zip(body.body, body.body[1:], strict=False):
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                docs[stmt.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def _override_fields(config: type = _OVERRIDES_FROM) -> list[tuple[str, Any, Any]]:
    """The flags of :data:`_OVERRIDES`, derived from ``config``: its field's type (``total_steps``: :data:`Steps`,
    which takes 2e6) made optional, its docstring as the help, default None (the learner's default)."""
    hints = typing.get_type_hints(config, include_extras=True)
    docs = _field_docs(config)
    out = []
    for name in _OVERRIDES:
        kind = Steps if name == "total_steps" else hints[name]
        help_ = f"{docs[name]} None: each learner's default."
        out.append((name, Annotated[kind | None, tyro.conf.arg(help=help_)], dataclasses.field(default=None)))
    return out


@dataclasses.dataclass(frozen=True)
class _SweepOptions:
    """Train a grid of learners × envs × safety bounds (seeds of a cell train together) into one sweep
    folder; run the same command again to resume an interrupted sweep."""

    learners: tuple[str, ...]
    """Learner names (crax list), e.g. --learners ppo ppo-lag ppo-pid."""
    envs: tuple[str, ...]
    """Env ids (or package.module:EnvClass), e.g. --envs PointGoal1 PointGoal2."""
    out: str
    """Sweep folder: manifest.json and one run folder per cell, <env>-<learner>-d<bound>."""
    safety_bounds: tuple[float, ...] = (25.0,)
    """Safety bounds d, e.g. --safety-bounds 15 25 35."""
    num_seeds: int = 3
    """Seeds per cell, trained together under jax.vmap."""
    dry_run: bool = False
    """Print the grid (cells, steps, total env steps, what each cell would do) and train nothing."""
    backend: Literal["local", "ray"] = "local"
    """local: cells one after another in this process; ray: one Ray task per cell (pip install -e ".[ray]")."""
    address: str | None = None
    """Ray cluster address (default: start a local Ray instance)."""
    cpus_per_cell: float = 1.0
    """CPUs each Ray task reserves."""
    gpus_per_cell: float = 0.0
    """GPUs each Ray task reserves (fractions share a GPU)."""
    progress: bool = True
    """Show the progress bar of each local cell."""
    constraint: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """Add a registered constraint term to every env: NAME or NAME:param=value,..., e.g. action_energy:weight=0.05."""
    sensor: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """Add a registered sensor to every env's observation: NAME or NAME:param=value,..."""
    set: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """Set any other learner config field for every cell: FIELD=VALUE, e.g. --set constraint_value=per-step
    (every learner of the sweep must have the field; fields: crax train LEARNER --help)."""

    def run(self) -> None:
        from crax.studies.sweep import sweep
        from crax.tasks.compose import parse_assignments, parse_flags

        overrides = {k: getattr(self, k) for k in _OVERRIDES if getattr(self, k) is not None}
        for field, value in parse_assignments(self.set, "--set").items():
            if field in _OVERRIDES:
                raise ValueError(f"--set {field}=...: {field} has its own flag, --{field.replace('_', '-')}")
            overrides[field] = value
        env_kwargs = parse_flags(self.constraint, self.sensor)
        try:
            result = sweep(self.out, self.learners, self.envs, self.safety_bounds, self.num_seeds, overrides,
                           env_kwargs=env_kwargs,
                           backend=self.backend, address=self.address, cpus_per_cell=self.cpus_per_cell,
                           gpus_per_cell=self.gpus_per_cell, dry_run=self.dry_run,
                           progress=None if self.progress else False)
        except KeyboardInterrupt:
            print(f"\nsweep interrupted; run the same command again to resume it ({self.out})", file=sys.stderr)
            raise SystemExit(130) from None
        if self.dry_run:
            return
        if result.failed:
            raise SystemExit(1)
        print(f"summary: crax table {result.dir}    curves: crax plot {result.dir} --out {result.dir}/curves.png")


SweepCmd = dataclasses.make_dataclass("SweepCmd", _override_fields(), bases=(_SweepOptions,), frozen=True,
                                      kw_only=True, namespace={"__doc__": _SweepOptions.__doc__})
"""``crax sweep``: :class:`_SweepOptions` and a flag for each field of :data:`_OVERRIDES`."""
SweepCmd.__module__ = __name__


@dataclasses.dataclass(frozen=True)
class TableCmd:
    """Summarize finished runs: mean return and cost with 95% intervals, safe and win per cell, wins and
    safe % per learner and level (the paper's Table 3), IQM and P(X > Y)."""

    paths: tyro.conf.Positional[tuple[str, ...]]
    """Run folders and/or sweep folders."""
    out: str | None = None
    """Path prefix: writes PREFIX.csv, PREFIX.json and PREFIX.md."""
    policy: EvalPolicy | None = None
    """Evaluated policy to summarize (default: each run's own eval_policy)."""
    reps: int = 2000
    """Bootstrap replicates of the IQM and P(X > Y) intervals."""

    def run(self) -> None:
        from crax.studies.table import summary_table, to_markdown

        if self.reps < 1:
            raise ValueError(f"--reps must be >= 1, got {self.reps}")
        summary = summary_table(self.paths, self.out, policy=self.policy, reps=self.reps)
        print(to_markdown(summary), end="")
        if self.out:
            print(f"\nwritten: {self.out}.csv, {self.out}.json, {self.out}.md", file=sys.stderr)


@dataclasses.dataclass(frozen=True)
class PlotCmd:
    """Plot episodic return and cost against env steps: mean and 95% band over seeds, one colour per
    learner, the safety bound dashed; one row of panels per env and bound."""

    paths: tyro.conf.Positional[tuple[str, ...]]
    """Run folders and/or sweep folders."""
    out: str
    """Image file (.png, .pdf, .svg)."""
    dpi: int = 120
    """Resolution of raster images."""

    def run(self) -> None:
        from crax.studies.plot import plot_runs

        plot_runs(self.paths, self.out, dpi=self.dpi)
        print(f"written: {self.out}")


_LEVELS = ("levels", Annotated[tuple[int, ...], tyro.conf.arg(help="Levels, in training order.")],
           dataclasses.field(default=(1, 2, 3)))


def _study_main(argv: list[str], prog: str, description: str, flag: Any, study: Callable[..., Any]) -> None:
    """``prog <learner> --env ID [flag] [config flags]``: the learner command of ``crax train`` with ``flag``;
    runs ``study(cls, config, args, **run)``, ``run`` the run options (``run_dir``, ``runs_root``,
    ``env_kwargs``, ``progress``), and prints the run's final evaluation."""
    cls, config, args = train_cli.parse_learner_command(argv, prog, description, extra=(flag, *train_cli.ENV_FLAGS))
    result = train_cli.run_or_exit(prog, lambda: study(
        cls, config, args, run_dir=None if args.run_dir is None else Path(args.run_dir), runs_root=args.runs_root,
        env_kwargs=train_cli.env_kwargs_of(args), progress=None if args.progress else False))
    train_cli.print_final(result)


def curriculum_main(argv: list[str]) -> None:
    """``crax curriculum <learner> --env PointGoal [--levels 1 2 3] [config flags]``."""
    _study_main(argv, "crax curriculum", "Train a learner on levels 1 -> 2 -> 3 of a task, carrying all its state.",
                _LEVELS, lambda cls, config, args, **run: curriculum(cls, config, args.env, levels=args.levels, **run))


_FROM: Any = ("from_run", Annotated[str | None, tyro.conf.arg(name="from", help="Start from this finished run "
              "(e.g. a PPO run) instead of training PPO first.")], dataclasses.field(default=None))


def transfer_main(argv: list[str]) -> None:
    """``crax transfer <learner> --env PointGoal3 [--from RUN] [config flags]``."""
    _study_main(argv, "crax transfer", "Train PPO for half the budget, then a safe learner initialised from it.",
                _FROM, lambda cls, config, args, **run: transfer(cls, config, args.env, from_run=args.from_run, **run))
