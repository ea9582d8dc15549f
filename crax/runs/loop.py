"""The run loop (:func:`train_loop`): compile, train, evaluate, checkpoint, interrupt.

:func:`crax.runs.training.train` settles which run it is (new, resumed, a curriculum, one started
from another run) and holds its folder; this loop only dispatches compiled iterations, logs,
evaluates, checkpoints and reports progress; everything per step runs inside the learner family's
trainer's jitted call (:mod:`crax.learners.shared.trainer`). A curriculum's stages split the
iterations equally (:func:`stage_bounds`); each stage starts fresh envs, every learner and
optimizer variable carried across.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

from crax.core.env import Env
from crax.devices import distributed
from crax.learners.shared.trainer import BaseTrainer
from crax.runs import checkpoint as ckpt
from crax.runs.guards import StopOnSigterm, StorageFailed, Terminated, TrainingDiverged
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
from crax.runs.transfer import Transfer, initial_model


def eval_iterations(total: int, num_evals: int) -> set[int]:
    """The iterations after which a run of ``total`` iterations evaluates: ``num_evals`` of them, evenly spread."""
    return {max(1, round(total * (k + 1) / num_evals)) for k in range(num_evals)} if num_evals else set()


def call_length(it: int, per_call: int, stage_end: int, eval_iters: set[int]) -> int:
    """Iterations of the compiled call that starts after iteration ``it``: ``per_call`` (fewer at the
    end of a stage), ended at the first evaluation due inside it when another is due there too, so
    that every evaluation runs (a call of another length compiles once more)."""
    n = min(per_call, stage_end - it)
    due = sorted(e for e in eval_iters if it < e <= it + n)
    return due[0] - it if len(due) > 1 else n


def stage_bounds(config: Any, num_stages: int) -> list[int]:
    """Cumulative iteration counts at the end of each stage (the budget split equally)."""
    per_stage = -(-config.num_iterations // num_stages)
    return [0, *(per_stage * (k + 1) for k in range(num_stages))]


def stage_of(bounds: list[int], iteration: int) -> int:
    """The stage that runs iteration ``iteration + 1``."""
    return max(k for k in range(len(bounds) - 1) if bounds[k] <= iteration)


def train_loop(cls, config: Any, envs: list[tuple[Env, str]], trainers: list[BaseTrainer], run_dir: Path,
               restored: dict[str, Any] | None, progress: bool | None, init: Transfer | None) -> TrainResult:
    """Trains from ``restored`` (a checkpoint to continue) or from scratch (``init``: the parts of
    another run it starts from), in the run folder ``run_dir``, which it holds locked; returns the run's results."""
    env_id = envs[-1][1]
    seeds = config.num_seeds
    init_key, eval_key = jax.random.split(jax.random.key(config.seed))
    steps_per_iter = config.steps_per_iteration
    bounds = stage_bounds(config, len(envs))
    total_iters = bounds[-1]
    resume = restored is not None

    def stage_at(iteration: int) -> int:
        return stage_of(bounds, iteration)

    def enter(stage: int, state):
        """The first state of a later stage: its fresh envs, everything else carried."""
        fresh = trainers[stage].init(jax.random.fold_in(init_key, stage))
        return trainers[stage].place(fresh.replace(model=state.model, key=state.key, env_steps=state.env_steps,
                                                   iteration=state.iteration))

    start_iter = 0
    if resume:
        start_iter = restored["iteration"]
        held = stage_at(start_iter - 1)
        state, state_stage = trainers[held].place(restored["state"]), held
    else:
        state, state_stage = trainers[0].init(init_key), 0
        if init is not None:
            state = initial_model(trainers[0], state, init)
    done_state = state  # the state after the last finished iteration (what Ctrl-C saves)

    eval_iters = eval_iterations(total_iters, config.num_evals)
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
            stage = stage_at(it)
            if stage != state_stage:
                state, state_stage = enter(stage, state), stage
            trainer = trainers[stage]
            n = call_length(it, config.iterations_per_call, bounds[stage + 1], eval_iters)
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
