"""Training runs: :func:`train` (a new run, a resumed one or curriculum stages) and :func:`complete_run`.

    from crax import runs
    from crax.learners import PPOLag
    result = runs.train("ppo-lag", PPOLag.Config(total_steps=2_000_000), "PointGoal1")
    result.final            # per seed: final evaluation return, cost and whether it is safe

``env`` takes a registered id (``crax.make``) or an import path ``package.module:EnvClass`` of any
:class:`crax.core.env.Env` subclass constructible from keyword arguments. The command line
(``crax train``) is :mod:`crax.cli.train`.

The Python loop here only dispatches compiled iterations, logs, evaluates, checkpoints and
reports progress; everything per step runs inside the learner family's trainer's jitted call (:mod:`crax.learners.shared.trainer`).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from crax.core.env import Env
from crax.devices import distributed
from crax.learners.shared.learner import Learner
from crax.learners.shared.trainer import BaseTrainer
from crax.runs import checkpoint as ckpt
from crax.runs import checkpoint_layouts
from crax.runs.envs import env_label, get_learner, make_env, trainer_for
from crax.runs.guards import (
    RunComplete,
    StopOnSigterm,
    StorageFailed,
    Terminated,
    TrainingDiverged,
    check_memory,
    check_seed,
)
from crax.runs.lock import RunLock
from crax.runs.metrics import NullLogger, Progress, RunLogger
from crax.runs.results import (
    RESULTS_FILE,
    TrainResult,
    eval_summary,
    finite_mean,
    last_episodes,
    seed_metrics,
    write_results,
)


def _eval_iterations(total: int, num_evals: int) -> set[int]:
    return {max(1, round(total * (k + 1) / num_evals)) for k in range(num_evals)} if num_evals else set()


def _call_length(it: int, per_call: int, stage_end: int, eval_iters: set[int]) -> int:
    """Iterations of the compiled call that starts after iteration ``it``: ``per_call`` (fewer at the
    end of a stage), ended at the first evaluation due inside it when another is due there too, so
    that every evaluation runs (a call of another length compiles once more)."""
    n = min(per_call, stage_end - it)
    due = sorted(e for e in eval_iters if it < e <= it + n)
    return due[0] - it if len(due) > 1 else n


INIT_PARTS = ("actor", "reward_critic", "normalizer")
"""What a run initialised from another (``init_from``) copies by default: the policy, the reward
critic and the observation normalizer; the cost critic, multipliers and optimizer start fresh."""


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
      init_from: a finished run folder whose final learner seeds this one (same observation and
        action sizes and seed count); ``init_parts`` names the learner parts copied.
    """
    if resume:
        if run_dir is None:
            raise ValueError("resume=True needs run_dir, the folder of the run to continue")
        record = ckpt.read_config(run_dir)
        cls = get_learner(learner if learner is not None else record["learner"])
        if cls.name != record["learner"]:
            raise ValueError(f"run {str(run_dir)!r} trained learner {record['learner']!r}, not {cls.name!r}")
        config = config if config is not None else ckpt.config_from_dict(cls.Config, record["config"])
        env_kwargs = record["env_kwargs"] if env_kwargs is None else env_kwargs
        stages = record.get("stages")
        init_record = record.get("init_from")
        if stages:
            envs = [(make_env(e, env_kwargs), e) for e in stages]
        elif isinstance(env, Env):
            envs = [(env, env_label(env))]
        else:
            envs = [(make_env(record["env"], env_kwargs), record["env"])]
        run_dir = Path(run_dir)
    else:
        if learner is None:
            from crax.plugins import registry

            raise ValueError("train needs a learner (a registered name or class) unless resume=True; "
                             f"valid learners: {', '.join(sorted(registry().learners))}")
        cls = get_learner(learner)
        if stages:
            if len(stages) < 2:
                raise ValueError(f"a curriculum needs at least two stages, got {list(stages)}")
            envs = [(make_env(e, env_kwargs), e) for e in stages]
        else:
            envs = [(env if isinstance(env, Env) else make_env(env, env_kwargs), env_label(env))]
        init_record = None if init_from is None else {"run_dir": str(init_from), "parts": list(init_parts)}
        if run_dir is not None and (Path(run_dir) / ckpt.CONFIG_FILE).exists():
            raise ValueError(f"{str(run_dir)!r} already holds a run; resume it or choose another run_dir")
    config = config if config is not None else cls.Config()
    if type(config) is not cls.Config:
        raise ValueError(f"learner {cls.name!r} takes a {cls.Config.__qualname__}, got {type(config).__qualname__}")
    sizes = {e.observation_size for e, _ in envs}
    if len(sizes) > 1:
        raise ValueError("curriculum stages must share one observation size; got "
                         + ", ".join(f"{i} {e.observation_size}" for e, i in envs))
    check_seed(config.seed)
    # Everything that can refuse the config (budgets, device layout, memory) runs before a run folder
    # exists, so a refused run leaves no folder whose config.json later passes for a run's.
    trainers = [trainer_for(cls, config, e) for e, _ in envs]
    for trainer in trainers:
        check_memory(trainer)
    if not resume:
        if run_dir is None:
            label = envs[-1][1].rpartition(":")[2] + ("-curriculum" if stages else "")
            made = str(ckpt.new_run_dir(runs_root, label, cls.name)) if distributed.is_main() else ""
            run_dir = Path(distributed.agree(made))
        else:
            run_dir = Path(run_dir)
            distributed.barrier("crax-run-dir-checked")  # no process may see the config.json written below
            if distributed.is_main():
                run_dir.mkdir(parents=True, exist_ok=True)
    assert isinstance(run_dir, Path)  # made a Path above, on resume or not (for the type checker)
    lock = RunLock(run_dir).acquire() if distributed.is_main() else None
    try:
        if lock is not None and not resume and (run_dir / ckpt.CONFIG_FILE).exists():  # a run started since the check
            raise ValueError(f"{str(run_dir)!r} already holds a run; resume it or choose another run_dir")
        restored = _resume_point(cls, config, envs, trainers, run_dir, record) if resume else None
        if distributed.is_main():
            ckpt.write_config(run_dir, learner=cls.name, env_id=envs[-1][1], env_kwargs=dict(env_kwargs or {}),
                              config=config, stages=[i for _, i in envs] if len(envs) > 1 else None,
                              init_from=init_record)
            # an extended finished run: its old results.json no longer describes the run (until it finishes)
            (run_dir / RESULTS_FILE).unlink(missing_ok=True)
        return _train_loop(cls, config, envs, trainers, run_dir, restored, progress,
                           None if resume else init_record)
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


def _initial_model(trainer: BaseTrainer, state, init: dict[str, Any]):
    """``state`` with the learner parts ``init["parts"]`` copied from the final checkpoint of ``init["run_dir"]``."""
    record = ckpt.read_config(init["run_dir"])
    src_cls = get_learner(record["learner"])
    src_config = ckpt.config_from_dict(src_cls.Config, record["config"])
    src_env = make_env(record["env"], record["env_kwargs"])
    source = trainer_for(src_cls, src_config, src_env)
    if src_config.num_seeds != trainer.config.num_seeds:
        raise ValueError(f"{init['run_dir']!r} trained {src_config.num_seeds} seed(s); this run has "
                         f"{trainer.config.num_seeds}")
    restored = ckpt.load_checkpoint(init["run_dir"], source.abstract_state(),
                                    checkpoint_layouts.packed_data([src_env]))["state"].model
    model = state.model
    for part in init["parts"]:
        if part not in model[0] or part not in restored[0]:
            raise ValueError(f"cannot copy {part!r}: valid parts are {sorted(set(model[0]) & set(restored[0]))}")
        want = jax.tree.map(lambda x: x.shape, model[0][part])
        got = jax.tree.map(lambda x: x.shape, restored[0][part])
        if want != got:
            raise ValueError(f"{init['run_dir']!r}: its {part} has shapes {got}, this run needs {want} "
                             "(another env, observation size or network size)")
        model[0][part] = jax.tree.map(jax.numpy.asarray, restored[0][part])
    return trainer.place(state.replace(model=model))


def _stage_bounds(config: Any, num_stages: int) -> list[int]:
    """Cumulative iteration counts at the end of each stage (the budget split equally)."""
    per_stage = -(-config.num_iterations // num_stages)
    return [0, *(per_stage * (k + 1) for k in range(num_stages))]


def _stage_of(bounds: list[int], iteration: int) -> int:
    """The stage that runs iteration ``iteration + 1``."""
    return max(k for k in range(len(bounds) - 1) if bounds[k] <= iteration)


def _resume_point(cls, config: Any, envs: list[tuple[Env, str]], trainers: list[BaseTrainer], run_dir: Path,
                  record: dict[str, Any]) -> dict[str, Any]:
    """The newest checkpoint of a run to continue (:func:`crax.runs.checkpoint.load_checkpoint`'s dict).

    Raises :class:`RunComplete` when the run has trained its stored budget and ``config`` asks for no
    more (writing ``results.json`` from the metrics if the run stopped before writing it), and
    ValueError when ``config`` asks for fewer steps than an unfinished run has already trained.
    Nothing in the folder changes otherwise, ``config.json`` included."""
    steps_per_iter = config.steps_per_iteration
    bounds = _stage_bounds(config, len(envs))

    def template(env_steps: int):  # a checkpoint holds the envs of the stage that ran its last iteration
        return trainers[_stage_of(bounds, env_steps // steps_per_iter - 1)].abstract_state()

    restored = ckpt.load_checkpoint(run_dir, template, checkpoint_layouts.packed_data([env for env, _ in envs]))
    if restored["iteration"] < bounds[-1]:
        return restored
    stored = ckpt.config_from_dict(cls.Config, record["config"])
    stored_bounds = _stage_bounds(stored, len(envs))
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


def _train_loop(cls, config: Any, envs: list[tuple[Env, str]], trainers: list[BaseTrainer], run_dir: Path,
                restored: dict[str, Any] | None, progress: bool | None, init: dict[str, Any] | None) -> TrainResult:
    """Trains from ``restored`` (a checkpoint to continue) or from scratch (``init``: a run to start from)."""
    env_id = envs[-1][1]
    seeds = config.num_seeds
    init_key, eval_key = jax.random.split(jax.random.key(config.seed))
    steps_per_iter = config.steps_per_iteration
    bounds = _stage_bounds(config, len(envs))
    total_iters = bounds[-1]
    resume = restored is not None

    def stage_of(iteration: int) -> int:
        return _stage_of(bounds, iteration)

    def enter(stage: int, state):
        """The first state of a later stage: its fresh envs, everything else carried."""
        fresh = trainers[stage].init(jax.random.fold_in(init_key, stage))
        return trainers[stage].place(fresh.replace(model=state.model, key=state.key, env_steps=state.env_steps,
                                                   iteration=state.iteration))

    start_iter = 0
    if resume:
        start_iter = restored["iteration"]
        held = stage_of(start_iter - 1)
        state, state_stage = trainers[held].place(restored["state"]), held
    else:
        state, state_stage = trainers[0].init(init_key), 0
        if init is not None:
            state = _initial_model(trainers[0], state, init)
    done_state = state  # the state after the last finished iteration (what Ctrl-C saves)

    eval_iters = _eval_iterations(total_iters, config.num_evals)
    main = distributed.is_main()
    logger = (RunLogger(run_dir, seeds, resume_step=start_iter * steps_per_iter if resume else None) if main
              else NullLogger())
    bar = Progress(total_iters * steps_per_iter, start_iter * steps_per_iter, enabled=progress if main else False,
                   description=f"{cls.name} {env_id}", steps_per_iteration=steps_per_iter)
    multipliers: dict[str, float] = {}
    last_episode = last_episodes(run_dir, seeds)  # a resumed run reports its last episodes before new ones end
    it = last_ckpt = start_iter

    def storage_failed(what: str, e: OSError) -> StorageFailed:
        found = ckpt.checkpoints(run_dir)
        kept = (f"the newest checkpoint is still {found[-1][1]} (step {found[-1][0]:,})" if found
                else "no checkpoint was written yet")
        return StorageFailed(f"could not write {what} to {run_dir}: {e.strerror or e}; {kept}. Free space (or fix "
                             f"the folder) and resume with: crax train --resume {run_dir}")

    def commit(state, it: int) -> None:
        """Makes the records up to iteration ``it`` durable, then writes its checkpoint, so a checkpoint
        never runs ahead of its metrics (docs/DECISIONS.md, decision 44)."""
        try:
            logger.sync()
            ckpt.save_checkpoint(run_dir, state, env_steps=it * steps_per_iter, iteration=it)
        except OSError as e:
            raise storage_failed(f"the checkpoint of step {it * steps_per_iter:,}", e) from None

    def flush() -> None:
        try:
            logger.flush()
        except OSError as e:
            raise storage_failed("the metrics", e) from None

    stop = StopOnSigterm()
    try:
        stop.install()
        while it < total_iters:
            stage = stage_of(it)
            if stage != state_stage:
                state, state_stage = enter(stage, state), stage
            trainer = trainers[stage]
            n = _call_length(it, config.iterations_per_call, bounds[stage + 1], eval_iters)
            trainer.compile(state, n)  # compile time stays out of the steps/s figure
            t0 = time.perf_counter()
            new_state, metrics = trainer.run(state, n)
            metrics = distributed.to_host(metrics)
            elapsed = time.perf_counter() - t0
            sps = n * steps_per_iter * seeds / elapsed
            bad = metrics.pop("train/nonfinite") > 0
            good = n if not bad.any() else int(np.argmax(bad.any(axis=0)))
            for j in range(good):
                step = (it + j + 1) * steps_per_iter
                by_seed = [{**seed_metrics(metrics, s, j), "perf/steps_per_second": sps,
                             **({"curriculum/stage": stage} if len(envs) > 1 else {})} for s in range(seeds)]
                for s, values in enumerate(by_seed):
                    if values["episode/count"] > 0:
                        last_episode[s] = {k: values[f"episode/{k}"] for k in ("return", "cost", "length")}
                    else:  # no episode finished in this iteration: nothing to report for episodes
                        for k in [k for k in values if k.startswith("episode/") and k != "episode/count"]:
                            values.pop(k)
                logger.log(step, by_seed)
                multipliers = {k.removeprefix("multiplier/"): float(np.mean([v[k] for v in by_seed]))
                               for k in by_seed[0] if k.startswith("multiplier/")}
            if good < n:
                flush()
                found = ckpt.checkpoints(run_dir)
                kept = f"the last good checkpoint is {found[-1][1]}" if found else "no checkpoint was written yet"
                raise TrainingDiverged(
                    f"training diverged at iteration {it + good + 1} (env step {(it + good + 1) * steps_per_iter:,}): "
                    f"a loss or parameter became non-finite (seeds {np.flatnonzero(bad[:, good]).tolist()}); "
                    f"{kept}. Try a lower learning rate or a max_grad_norm.")
            done = it + n
            step = done * steps_per_iter
            if any(it < e <= done for e in eval_iters):
                ev = distributed.to_host(trainer.evaluate(new_state, jax.random.fold_in(eval_key, done)))
                summaries = [eval_summary(ev, s) for s in range(seeds)]
                logger.log(step, [{f"eval/{mode}/{k}": v for mode, vals in sm.items() for k, v in vals.items()}
                                  for sm in summaries])
            # only now, with its evaluation logged, is the call finished: an interrupt before this
            # point checkpoints the previous state, and resuming redoes the call, evaluation included
            state = done_state = new_state
            it = done
            if it - last_ckpt >= config.checkpoint_every or it == total_iters:
                commit(state, it)
                last_ckpt = it
            flush()
            bar.update(step, sps, finite_mean([e["return"] for e in last_episode]),
                       finite_mean([e["cost"] for e in last_episode]), multipliers)
    except KeyboardInterrupt as e:
        stop.restore()  # a second SIGTERM while the checkpoint below is written kills at once
        bar.close()
        if it > last_ckpt and not distributed.multiprocess():  # saving gathers from every process
            commit(done_state, it)
        cause = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
        print(f"\n{cause} after {it * steps_per_iter:,} steps (iteration {it}); checkpoint written. "
              f"Resume with: crax train --resume {run_dir}", file=sys.stderr)
        raise
    finally:
        stop.restore()
        bar.close()
        try:
            logger.close()
        except OSError as e:  # the records it still held could not be written (a full disk)
            raise storage_failed("the metrics", e) from None

    distributed.barrier("crax-metrics-written")  # every process reads the results from process 0's records
    try:
        final, evals, history = write_results(cls, config, envs, bounds, run_dir, last_episode, write=main)
    except OSError as e:
        raise storage_failed(RESULTS_FILE, e) from None
    return TrainResult(run_dir=run_dir, learner=cls.name, env=env_id, config=config, env_steps=total_iters * steps_per_iter,
                       final=final, evals=evals, history=history, trainer=trainers[state_stage], state=state)
