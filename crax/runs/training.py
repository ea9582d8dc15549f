"""Training runs: :func:`train` (a new run, a resumed one, curriculum stages, a run started from
another) and :func:`complete_run`.

    from crax import runs
    from crax.learners import PPOLag
    result = runs.train("ppo-lag", PPOLag.Config(total_steps=2_000_000), "PointGoal1")
    result.final            # per seed: final evaluation return, cost and whether it is safe

``env`` takes a registered id (``crax.make``) or an import path ``package.module:EnvClass`` of any
:class:`crax.core.env.Env` subclass constructible from keyword arguments. The command line
(``crax train``) is :mod:`crax.cli.train`.

:func:`train` settles the run first, :func:`_resumed` or :func:`_new_run` (with its curriculum's
envs and the parts of the run it starts from, :mod:`crax.runs.transfer`), running every check that can
refuse it; only then does it make the run folder, lock it, write ``config.json`` and hand over to the
loop (:func:`crax.runs.loop.train_loop`), where everything per step runs inside the learner family's
trainer's jitted call (:mod:`crax.learners.shared.trainer`).
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crax.core import observation
from crax.core.env import Env
from crax.devices import distributed
from crax.learners.shared.learner import Learner
from crax.learners.shared.trainer import BaseTrainer
from crax.runs import checkpoint as ckpt
from crax.runs import checkpoint_layouts
from crax.runs.envs import env_label, get_learner, make_env, trainer_for
from crax.runs.guards import RunComplete, check_memory, check_seed
from crax.runs.lock import RunLock
from crax.runs.loop import stage_bounds, stage_of, train_loop
from crax.runs.results import RESULTS_FILE, TrainResult, last_episodes, write_results
from crax.runs.transfer import INIT_PARTS, Transfer, plan_transfer


def train(
    learner: str | type[Learner] | None,
    config: Any = None,
    env: str | Env = "PointGoal1",
    *,
    run_dir: str | Path | None = None,
    resume: bool = False,
    runs_root: str | Path = "runs",
    env_kwargs: dict[str, Any] | None = None,
    progress: bool | None = None,
    stages: Sequence[str] | None = None,
    init_from: str | Path | None = None,
    init_parts: Sequence[str] = INIT_PARTS,
) -> TrainResult:
    """Trains ``config.num_seeds`` seeds of a learner on an env, writing a run folder.

    Args:
      learner: registered name (``"ppo-lag"``) or learner class (None on resume: the stored one).
      config: the learner's ``Config``; default: its defaults. On resume, default: the stored config
        (pass one to change e.g. ``total_steps``; it must have the same learner config class).
      env: env id for :func:`make_env`, or an :class:`Env` instance (then resuming needs it again).
      run_dir: the run folder; default ``<runs_root>/<env>-<learner>-<timestamp>``.
      resume: continue the run in ``run_dir`` from its latest checkpoint (learner, env and config are
        read from its ``config.json`` unless given).
      env_kwargs: keyword overrides for ``crax.make``.
      progress: show progress (a bar on a terminal, plain lines on stdout otherwise); False: silent.
      stages: env ids trained one after the other in this run, the step budget split equally, every
        learner and optimizer variable carried across (a curriculum; ``env`` is then ignored and
        the run's env is the last stage's). All stages need the same observation size.
      init_from: a run folder whose learner (at its newest checkpoint) seeds this one: the same seed
        count, and each part of ``init_parts`` in both learners with the same shapes (the same
        observation and action sizes and networks), else ValueError before the run folder exists.
      init_parts: the learner parts copied (:mod:`crax.runs.transfer`: a part's name, ``actor``, or a
        piece of one by its path, ``critics/reward_q1``); the default suits the PPO family.
    """
    if resume:
        run = _resumed(learner, config, env, run_dir, env_kwargs)
    else:
        run = _new_run(learner, config, env, run_dir, env_kwargs, stages, init_from, init_parts)
    # Everything that can refuse the run (its config, budgets, device layout, memory, the run it starts
    # from) has run: only now does a run folder exist, so a refused run leaves no folder whose
    # config.json later passes for a run's.
    return _locked(run, _folder(run, runs_root), progress)


@dataclasses.dataclass
class _Run:
    """A run as :func:`train` settled it, before it touches the run folder."""

    cls: type[Learner]
    config: Any
    envs: list[tuple[Env, str]]  # (env, id): one per curriculum stage, else one
    trainers: list[BaseTrainer]  # one per env
    env_kwargs: dict[str, Any] | None
    run_dir: Path | None  # None: a new folder under runs_root
    record: dict[str, Any] | None = None  # a resumed run's config.json
    init_record: dict[str, Any] | None = None  # config.json's init_from entry (a run started from another)
    transfer: Transfer | None = None  # a new run's parts from another run


def _resumed(learner: str | type[Learner] | None, config: Any, env: str | Env, run_dir: str | Path | None,
             env_kwargs: dict[str, Any] | None) -> _Run:
    """The run in ``run_dir`` to continue: its learner, env (or stages), ``env_kwargs`` and config are
    its ``config.json``'s, unless given (``env``: only an :class:`Env` instance replaces the stored id)."""
    if run_dir is None:
        raise ValueError("resume=True needs run_dir, the folder of the run to continue")
    record = ckpt.read_config(run_dir)
    cls = get_learner(learner if learner is not None else record["learner"])
    if cls.name != record["learner"]:
        raise ValueError(f"run {str(run_dir)!r} trained learner {record['learner']!r}, not {cls.name!r}")
    config = config if config is not None else ckpt.config_from_dict(cls.Config, record["config"])
    env_kwargs = record["env_kwargs"] if env_kwargs is None else env_kwargs
    if stages := record.get("stages"):
        envs = _stage_envs(stages, env_kwargs)
    elif isinstance(env, Env):
        envs = [(env, env_label(env))]
    else:
        envs = [(make_env(record["env"], env_kwargs), record["env"])]
    config, trainers = _checked(cls, config, envs)
    return _Run(cls, config, envs, trainers, env_kwargs, Path(run_dir), record=record,
                init_record=record.get("init_from"))


def _new_run(learner: str | type[Learner] | None, config: Any, env: str | Env, run_dir: str | Path | None,
             env_kwargs: dict[str, Any] | None, stages: Sequence[str] | None, init_from: str | Path | None,
             init_parts: Sequence[str]) -> _Run:
    """A run to start: on ``env``, or on each of ``stages`` in turn (a curriculum), from scratch or
    from the parts ``init_parts`` of the run in ``init_from`` (read here, so a transfer that cannot
    work is refused before anything trains)."""
    if learner is None:
        from crax.plugins import registry

        raise ValueError("train needs a learner (a registered name or class) unless resume=True; "
                         f"valid learners: {', '.join(sorted(registry().learners))}")
    cls = get_learner(learner)
    if stages:
        if len(stages) < 2:
            raise ValueError(f"a curriculum needs at least two stages, got {list(stages)}")
        envs = _stage_envs(stages, env_kwargs)
    else:
        envs = [(env if isinstance(env, Env) else make_env(env, env_kwargs), env_label(env))]
    if run_dir is not None and (Path(run_dir) / ckpt.CONFIG_FILE).exists():
        raise ValueError(f"{str(run_dir)!r} already holds a run; resume it or choose another run_dir")
    config, trainers = _checked(cls, config, envs)
    transfer = None if init_from is None else plan_transfer(init_from, init_parts, trainers[0])
    return _Run(cls, config, envs, trainers, env_kwargs, None if run_dir is None else Path(run_dir),
                init_record=None if transfer is None else transfer.record, transfer=transfer)


def _stage_envs(stages: Sequence[str], env_kwargs: dict[str, Any] | None) -> list[tuple[Env, str]]:
    """A curriculum's envs, one per stage id, each with ``env_kwargs``."""
    return [(make_env(e, env_kwargs), e) for e in stages]


def _checked(cls: type[Learner], config: Any, envs: list[tuple[Env, str]]) -> tuple[Any, list[BaseTrainer]]:
    """``config`` (default: the learner's defaults) and a trainer per env, once ``config`` has passed
    every check: its class, one observation size over the stages, its seed, its budgets and device
    layout (the trainers') and the memory it needs."""
    config = config if config is not None else cls.Config()
    if type(config) is not cls.Config:
        raise ValueError(f"learner {cls.name!r} takes a {cls.Config.__qualname__}, got {type(config).__qualname__}")
    shapes = [_observation_shapes(e) for e, _ in envs]
    if len(set(shapes)) > 1:
        raise ValueError("curriculum stages must share one observation size; got "
                         + ", ".join(f"{i} {shape}" for (_, i), shape in zip(envs, shapes, strict=True)))
    check_seed(config.seed)
    trainers = [trainer_for(cls, config, e) for e, _ in envs]
    for trainer in trainers:
        check_memory(trainer)
    return config, trainers


def _observation_shapes(env: Env) -> str:
    """An env's observation shapes as a stage comparison names them: a flat observation's size, or each
    entry of a dict observation, ``state 12, camera 64×64×3 uint8``."""
    spec = env.observation_spec
    if not observation.is_structured(spec):
        return str(observation.flat_size(spec))
    return ", ".join(f"{k} {observation.state_size(v)}" if k == observation.STATE
                     else f"{k} {'×'.join(map(str, v.shape))} {v.dtype}" for k, v in sorted(spec.items()))


def _folder(run: _Run, runs_root: str | Path) -> Path:
    """The run's folder: a resumed run's own; a new run's ``run_dir`` (made if missing), or a new one
    under ``runs_root``."""
    if run.run_dir is None:
        label = run.envs[-1][1].rpartition(":")[2] + ("-curriculum" if len(run.envs) > 1 else "")
        made = str(ckpt.new_run_dir(runs_root, label, run.cls.name)) if distributed.is_main() else ""
        return Path(distributed.agree(made))
    if run.record is None:  # a new run in a folder of the caller's choice
        distributed.barrier("crax-run-dir-checked")  # no process may see the config.json written below
        if distributed.is_main():
            run.run_dir.mkdir(parents=True, exist_ok=True)
    return run.run_dir


def _locked(run: _Run, run_dir: Path, progress: bool | None) -> TrainResult:
    """Trains ``run`` in ``run_dir`` under its lock: finds a resumed run's checkpoint, writes
    ``config.json`` (and drops an extended run's old ``results.json``), then runs the loop."""
    lock = RunLock(run_dir).acquire() if distributed.is_main() else None
    try:
        if lock is not None and run.record is None and (run_dir / ckpt.CONFIG_FILE).exists():
            # a run started in this folder since _new_run checked it
            raise ValueError(f"{str(run_dir)!r} already holds a run; resume it or choose another run_dir")
        restored = (None if run.record is None
                    else _resume_point(run.cls, run.config, run.envs, run.trainers, run_dir, run.record))
        if distributed.is_main():
            ckpt.write_config(run_dir, learner=run.cls.name, env_id=run.envs[-1][1],
                              env_kwargs=dict(run.env_kwargs or {}), config=run.config,
                              stages=[i for _, i in run.envs] if len(run.envs) > 1 else None,
                              init_from=run.init_record)
            # an extended finished run: its old results.json no longer describes the run (until it finishes)
            (run_dir / RESULTS_FILE).unlink(missing_ok=True)
        return train_loop(run.cls, run.config, run.envs, run.trainers, run_dir, restored, progress, run.transfer)
    finally:
        if lock is not None:
            lock.release()


def complete_run(learner: str | type[Learner], config: Any, env: str | Env, run_dir: str | Path, *,
                 progress: bool | None = None, init_from: str | Path | None = None,
                 env_kwargs: dict[str, Any] | None = None) -> TrainResult | None:
    """Brings ``run_dir`` to the end of ``config``'s budget, whatever state it was left in: trains a
    new run where it holds none, resumes from the newest checkpoint (with the ``env_kwargs`` stored
    in it), starts over where the run stopped before its first checkpoint (nothing to keep); None
    where the run was already complete."""
    run_dir = Path(run_dir)
    if (run_dir / ckpt.CONFIG_FILE).exists():
        if ckpt.checkpoints(run_dir):
            _check_same_settings(run_dir, config)
            try:
                return train(None, config, run_dir=run_dir, resume=True, progress=progress)
            except RunComplete:
                return None
        shutil.rmtree(run_dir)
    return train(learner, config, env, run_dir=run_dir, progress=progress, init_from=init_from, env_kwargs=env_kwargs)


def _check_same_settings(run_dir: Path, config: Any) -> None:
    """ValueError naming the fields where ``config`` differs from the stored run's (``total_steps``
    aside), so that a run is never continued with settings it did not start with (e.g. after a
    learner's default changed between the start and the resume of a sweep's cell)."""
    if type(config) is not get_learner(ckpt.read_config(run_dir)["learner"]).Config:
        return  # another learner: train() names that error
    differ = [f"{name}: stored {stored!r}, asked {asked!r}"
              for name, (stored, asked) in ckpt.stored_differences(run_dir, config).items()]
    if differ:
        raise ValueError(f"run {str(run_dir)!r} was started with other settings ({'; '.join(differ)}); finish it "
                         f"as it started with `crax train --resume {run_dir}`, or move it away to train it anew")


def _resume_point(cls, config: Any, envs: list[tuple[Env, str]], trainers: list[BaseTrainer], run_dir: Path,
                  record: dict[str, Any]) -> dict[str, Any]:
    """The newest checkpoint of a run to continue (:func:`crax.runs.checkpoint.load_checkpoint`'s dict).

    Raises :class:`RunComplete` when the run has trained its stored budget and ``config`` asks for no
    more (writing ``results.json`` from the metrics if the run stopped before writing it), and
    ValueError when ``config`` asks for fewer steps than an unfinished run has already trained.
    Nothing in the folder changes otherwise, ``config.json`` included."""
    steps_per_iter = config.steps_per_iteration
    bounds = stage_bounds(config, len(envs))

    def template(env_steps: int):  # a checkpoint holds the envs of the stage that ran its last iteration
        return trainers[stage_of(bounds, env_steps // steps_per_iter - 1)].abstract_state()

    restored = ckpt.load_checkpoint(run_dir, template, checkpoint_layouts.packed_data([env for env, _ in envs]))
    if restored["iteration"] < bounds[-1]:
        return restored
    stored = ckpt.config_from_dict(cls.Config, record["config"])
    stored_bounds = stage_bounds(stored, len(envs))
    trained, asked = restored["env_steps"], bounds[-1] * steps_per_iter
    if restored["iteration"] < stored_bounds[-1]:
        raise ValueError(f"run {str(run_dir)!r} has trained {trained:,} of its {stored.total_steps:,} steps; "
                         f"--total-steps {config.total_steps:,} would not extend it. Resume without --total-steps "
                         "to finish it, or pass a larger one.")
    written = ""
    if not (run_dir / RESULTS_FILE).exists():  # it stopped between its last checkpoint and its results
        write_results(cls, stored, envs, stored_bounds, run_dir, last_episodes(run_dir, stored.num_seeds),
                       write=distributed.is_main())
        written = " (written now from its metrics)"
    fewer = (f" (--total-steps {config.total_steps:,} asks for no more; config.json is unchanged)"
             if asked < trained else "")
    raise RunComplete(f"run {str(run_dir)!r} is complete: it trained {trained:,} steps{fewer}; its results are "
                      f"in {run_dir / RESULTS_FILE}{written}. Pass a larger --total-steps to extend it.")
