"""``crax train LEARNER --env ID`` and ``crax train --resume RUN_DIR``: flags, parsing and exit codes.

The learner's config and the run options form one flat tyro command per learner; ``--constraint`` and
``--sensor`` add components (shared with ``crax curriculum`` and ``crax transfer``).
"""

from __future__ import annotations

import dataclasses
import signal
import sys
import typing
from typing import Annotated, Any, Union

import tyro

from crax.cli.common import Steps, fail
from crax.devices import distributed
from crax.devices.settings import PHYSICS_HELP, Physics
from crax.learners import presets
from crax.learners.on_policy.trainer import EVAL_POLICIES
from crax.learners.shared.learner import Learner
from crax.runs import checkpoint as ckpt
from crax.runs.envs import check_components_target, get_learner, learners
from crax.runs.guards import RunComplete, StorageFailed, Terminated, TrainingDiverged
from crax.runs.results import TrainResult
from crax.runs.training import train
from crax.tasks import compose

_RUN_FIELDS = ("env", "run_dir", "runs_root", "progress")


def _steps_field(config: type, default: Any = dataclasses.MISSING) -> tuple:
    """The config's ``total_steps`` again, typed :data:`Steps` so the flag takes ``2e6``."""
    field = next(f for f in dataclasses.fields(config) if f.name == "total_steps")
    help_ = "Environment steps to train for, per seed (rounded up to whole iterations); 2e6 notation accepted."
    return ("total_steps", Annotated[Steps, tyro.conf.arg(help=help_)],
            dataclasses.field(default=field.default if default is dataclasses.MISSING else default,
                              metadata=field.metadata))


PRESET_FLAG: tuple = (
    "preset", Annotated[str | None, tyro.conf.arg(
        help="Take another implementation's default settings for this learner as the defaults of its flags "
             "(flags given still win): omnisafe = OmniSafe 0.5's configuration of the same algorithm "
             "(crax/learners/presets/omnisafe/LEARNER.toml lists the values and what differs).")],
    dataclasses.field(default=None))
"""``--preset`` (:mod:`crax.learners.presets`)."""


def _preset_defaults(argv: list[str], table: dict[str, type[Learner]]) -> tuple[str | None, dict[str, Any]]:
    """The learner named in ``argv`` and the defaults its ``--preset`` sets (for ``--env``'s id), read before
    tyro parses, so the preset's values are the flags' defaults. ValueError for an unknown preset or a
    learner the preset does not cover."""
    preset = env_id = None
    for i, arg in enumerate(argv):
        for flag in ("--preset", "--env"):
            if arg == flag and i + 1 < len(argv):
                value = argv[i + 1]
            elif arg.startswith(flag + "="):
                value = arg.split("=", 1)[1]
            else:
                continue
            if flag == "--preset":
                preset = value
            else:
                env_id = value
    learner = next((a for a in argv if a in table), None)
    if preset is None or learner is None:
        return learner, {}
    return learner, presets.preset_values(preset, table[learner], env_id)


def _command_type(cls: type[Learner], more: tuple = (), defaults: dict[str, Any] | None = None) -> type:
    """``cls.Config`` plus the run options (and ``more``), as one flat frozen dataclass for tyro; ``defaults``
    (a preset's values) replace the config's own defaults."""
    defaults = dict(defaults or {})
    hints = typing.get_type_hints(cls.Config, include_extras=True)
    overrides = [(f.name, hints[f.name], dataclasses.field(default=defaults[f.name], metadata=f.metadata))
                 for f in dataclasses.fields(cls.Config) if f.name in defaults and f.name != "total_steps"]
    extra = [*overrides,
        ("env", Annotated[str, tyro.conf.arg(help="Env id (crax.make) or import path package.module:EnvClass.")]),
        ("run_dir", Annotated[str | None, tyro.conf.arg(help="Run folder; default <runs-root>/<env>-<learner>-<time>.")],
         dataclasses.field(default=None)),
        ("runs_root", Annotated[str, tyro.conf.arg(help="Parent folder of new run folders.")],
         dataclasses.field(default="runs")),
        ("progress", Annotated[bool, tyro.conf.arg(help="Show progress: a bar on a terminal, a plain line every 10 iterations otherwise.")], dataclasses.field(default=True)),
        _steps_field(cls.Config, defaults.get("total_steps", dataclasses.MISSING)),
    ]
    return dataclasses.make_dataclass(f"Train_{cls.__name__}", [*extra, *more], bases=(cls.Config,), frozen=True,
                                      kw_only=True)


COMPONENT_FLAGS: tuple = (
    ("constraint", Annotated[tyro.conf.UseAppendAction[tuple[str, ...]], tyro.conf.arg(
        help="Add a registered constraint term to the env: NAME or NAME:param=value,param=value, "
             "e.g. action_energy:weight=0.05. Recorded in the run's env_kwargs.")], dataclasses.field(default=())),
    ("sensor", Annotated[tyro.conf.UseAppendAction[tuple[str, ...]], tyro.conf.arg(
        help="Add a registered sensor to the env's observation: NAME or NAME:param=value,param=value.")],
     dataclasses.field(default=())),
)
"""``--constraint`` and ``--sensor`` flags of ``crax train``, ``curriculum`` and ``transfer`` (:func:`env_kwargs_of`)."""

PHYSICS_FLAG: tuple = (
    "physics", Annotated[Physics, tyro.conf.arg(
        help=f"{PHYSICS_HELP}. Recorded in the run's env_kwargs when not jax.")],
    dataclasses.field(default="jax"))
"""``--physics`` (:mod:`crax.core.physics`)."""

ENV_PARAM_FLAG: tuple = (
    "env_param", Annotated[tyro.conf.UseAppendAction[tuple[str, ...]], tyro.conf.arg(
        help="Set a task parameter (crax.make's keyword; `crax params ENV` lists them): NAME=VALUE, once per "
             "parameter, e.g. --env-param vision_size=64. Recorded in the run's env_kwargs.")],
    dataclasses.field(default=()))
"""``--env-param`` (a task parameter, :func:`env_kwargs_of`)."""

IMAGE_SIZE_FLAG: tuple = (
    "image_size", Annotated[int | None, tyro.conf.arg(
        help="Square size of a Vision id's camera image (its vision_size parameter: 256 as Safety-Gymnasium's; "
             "64 as vision papers use): --env-param vision_size=N. Recorded in the run's env_kwargs.")],
    dataclasses.field(default=None))
"""``--image-size`` (the Vision ids' ``vision_size``, :func:`env_kwargs_of`)."""

ENV_FLAGS: tuple = (*COMPONENT_FLAGS, ENV_PARAM_FLAG, IMAGE_SIZE_FLAG, PHYSICS_FLAG)
"""Every flag of ``crax train``, ``curriculum`` and ``transfer`` that becomes a ``crax.make`` keyword (:func:`env_kwargs_of`)."""



def env_kwargs_of(args: Any) -> dict[str, Any] | None:
    """The ``crax.make`` keyword arguments of parsed ``--constraint``/``--sensor``/``--env-param``/``--image-size``/``--physics`` flags
    (None when none is given; ``physics`` only when not ``jax``, so a default run records what it did
    before the flag existed). ValueError for a malformed flag, or flags on a ``module:EnvClass`` env."""
    env_kwargs = compose.parse_flags(args.constraint, args.sensor)
    env_kwargs.update(compose.parse_env_params(args.env_param))
    if args.image_size is not None:
        if "vision_size" in env_kwargs:
            raise ValueError("--image-size and --env-param vision_size=... set the same parameter: give one")
        env_kwargs["vision_size"] = args.image_size
    check_components_target(args.env, env_kwargs)
    if args.physics != "jax":
        if ":" in args.env:
            raise ValueError(f"--physics applies to registered env ids (crax.make), not to the env class {args.env!r}")
        env_kwargs["physics"] = args.physics
    return env_kwargs or None


DISTRIBUTED_FLAGS: tuple = (
    ("coordinator_address", Annotated[str | None, tyro.conf.arg(
        help="Train over several processes/hosts (jax.distributed): HOST:PORT of process 0, the same on every "
             "process. The run folder must be on a filesystem all hosts share.")], dataclasses.field(default=None)),
    ("num_processes", Annotated[int | None, tyro.conf.arg(
        help="Number of processes of a multi-host run (default: detected on SLURM/MPI/Kubernetes).")],
     dataclasses.field(default=None)),
    ("process_id", Annotated[int | None, tyro.conf.arg(
        help="This process's index in [0, num_processes) (default: detected).")], dataclasses.field(default=None)),
)
"""``crax train``'s multi-host flags (:mod:`crax.devices.distributed`)."""


def _join_cluster(prog: str, args: Any) -> None:
    """Initializes jax.distributed when ``--coordinator-address`` was given (before any JAX work)."""
    if args.coordinator_address is None:
        if args.num_processes is not None or args.process_id is not None:
            fail(prog, ValueError("--num-processes and --process-id need --coordinator-address HOST:PORT"))
        return
    try:
        distributed.initialize(args.coordinator_address, args.num_processes, args.process_id)
    except ValueError as e:
        fail(prog, e)


@dataclasses.dataclass(frozen=True)
class ResumeArgs:
    """Continue an interrupted run from its latest checkpoint."""

    resume: Annotated[str, tyro.conf.arg(metavar="RUN_DIR")]
    """Run folder to continue (its config.json names learner, env and config)."""
    total_steps: Steps | None = None
    """New total environment steps per seed (default: the stored one; 2e6 notation accepted)."""
    progress: bool = True
    """Show progress: a bar on a terminal, a plain line every 10 iterations otherwise."""
    coordinator_address: str | None = None
    """Resume a multi-host run: HOST:PORT of process 0 (see crax train --help)."""
    num_processes: int | None = None
    """Number of processes of a multi-host run (default: detected)."""
    process_id: int | None = None
    """This process's index (default: detected)."""



def print_final(result: TrainResult) -> None:
    """The run folder and each seed's final evaluation: the judged policy with the verdict, then the
    other evaluated policy."""
    print(f"run folder: {result.run_dir}")
    bound = result.config.safety_bound

    def spread(f: dict[str, Any]) -> str:
        return (f"return {f['return']:.3f} ± {f['return_std']:.3f}  cost {f['cost']:.3f} ± {f['cost_std']:.3f}"
                if "return_std" in f else f"return {f['return']:.3f}  cost {f['cost']:.3f}")

    for s, f in enumerate(result.final):
        verdict = "safe" if f["safe"] else "not safe"
        print(f"seed {s}: {spread(f)}  ({verdict}, bound {bound:g}; {f['policy']} policy)")
        for other in (p for p in EVAL_POLICIES if p != f["policy"] and p in f):
            print(f"{'':>{len(str(s)) + 6}}{other} policy: {spread(f[other])}")


def run_or_exit(prog: str, fn, *args, **kwargs) -> TrainResult:
    """Runs a training call, turning the expected ways it stops into messages and exit codes."""
    try:
        return fn(*args, **kwargs)
    except RunComplete as e:
        print(f"{prog}: {e}")
        raise SystemExit(0) from None
    except ValueError as e:
        fail(prog, e)
    except (TrainingDiverged, StorageFailed) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except Terminated:
        raise SystemExit(128 + signal.SIGTERM) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


TRAIN_DESCRIPTION = ("Train a constrained PPO learner: crax train LEARNER --env ID [flags] (crax train LEARNER --help "
                     "lists the flags). Continue an interrupted run, or extend a finished one, with: crax train "
                     "--resume RUN_DIR [--total-steps N] (crax train --resume RUN_DIR --help).")


def train_main(argv: list[str]) -> None:
    """``crax train <learner> --env ID [flags]`` or ``crax train --resume RUN_DIR [--total-steps N]``."""
    prog = "crax train"
    if any(a == "--resume" or a.startswith("--resume=") for a in argv):
        args = tyro.cli(ResumeArgs, args=argv, prog=prog)
        _join_cluster(prog, args)
        try:
            record = ckpt.read_config(args.resume)
            cls = get_learner(record["learner"])
            config = ckpt.config_from_dict(cls.Config, record["config"])
            if args.total_steps is not None:
                config = dataclasses.replace(config, total_steps=int(args.total_steps))
        except ValueError as e:
            fail(prog, e)
        result = run_or_exit(prog, train, cls, config, run_dir=args.resume, resume=True,
                              progress=None if args.progress else False)
        if distributed.is_main():
            print_final(result)
        return

    cls, config, args = parse_learner_command(argv, prog, TRAIN_DESCRIPTION,
                                              extra=ENV_FLAGS + DISTRIBUTED_FLAGS)
    _join_cluster(prog, args)
    try:
        env_kwargs = env_kwargs_of(args)
    except ValueError as e:
        fail(prog, e)
    result = run_or_exit(prog, train, cls, config, args.env, run_dir=args.run_dir, runs_root=args.runs_root,
                          env_kwargs=env_kwargs, progress=None if args.progress else False)
    if distributed.is_main():
        print_final(result)


def parse_learner_command(argv: list[str], prog: str, description: str, extra: tuple = ()):
    """Parses ``<learner> --env ID [config flags] [run flags]`` into ``(learner class, config, args)``.

    ``extra`` adds fields to every learner's command (``(name, type, dataclasses.field)`` tuples).
    Bad input exits with status 2 and a message naming the valid choices.
    """
    try:
        table = learners()
        chosen, defaults = _preset_defaults(argv, table)
    except ValueError as e:
        fail(prog, e)
    commands = {name: _command_type(cls, (*extra, PRESET_FLAG), defaults if name == chosen else None)
                for name, cls in table.items()}
    union: Any = Union[tuple(  # noqa: UP007 - a runtime-built union needs typing.Union
        Annotated[cmd, tyro.conf.subcommand(name, description=(table[name].__doc__ or "").strip().splitlines()[0])]
        for name, cmd in commands.items()
    )]
    try:
        args = tyro.cli(union, args=argv, prog=prog, description=description)
    except ValueError as e:  # a config check in __post_init__ (tyro re-raises it)
        fail(prog, e)
    name = next(n for n, cmd in commands.items() if type(args) is cmd)
    cls = table[name]
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls.Config)}
    try:
        config = cls.Config(**values)
    except ValueError as e:
        fail(prog, e)
    if config.total_steps < config.steps_per_iteration:
        print(f"{prog}: note: --total-steps {config.total_steps:,} is less than one iteration; training one whole "
              f"iteration of {config.steps_per_iteration:,} steps (batch_size × num_minibatches × unroll_length)",
              file=sys.stderr)
    return cls, config, args
