"""Training and evaluation runs: the programmatic API and the ``crax train`` / ``crax eval`` commands.

Programmatic use (e.g. from a notebook)::

    from crax import runner
    from crax.learners import PPOLag
    result = runner.train("ppo-lag", PPOLag.Config(total_steps=2_000_000), "PointGoal1")
    result.final            # per seed: final evaluation return, cost and whether it is safe
    runner.evaluate(result.run_dir, episodes=64)

Command line (``crax.cli`` calls :func:`train_main` / :func:`eval_main` with the arguments after the
sub-command)::

    crax train ppo-lag --env PointGoal1 --total-steps 2e6 --num-seeds 3
    crax train ppo-lag --env AntVelocity1 --constraint action_energy:weight=0.05   # an added cost term
    crax train --resume runs/PointGoal1-ppo-lag-20250101-120000
    crax eval runs/PointGoal1-ppo-lag-20250101-120000 --episodes 64

``--env`` takes a registered id (``crax.make``) or an import path ``package.module:EnvClass`` of any
:class:`crax.env.Env` subclass constructible from keyword arguments.

The Python loop here only dispatches compiled iterations, logs, evaluates, checkpoints and
reports progress; everything per step runs inside :class:`crax.learners.Trainer`'s jitted call.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import jax
import numpy as np
import tyro

from crax import checkpoint as ckpt
from crax import compose, distributed
from crax.env import Env
from crax.learners.base import ConstrainedPPO, PPOConfig, Steps
from crax.learners.trainer import EVAL_POLICIES, Trainer, default_devices
from crax.logging import NullLogger, Progress, RunLogger, read_metrics
from crax.run_lock import RunLock

RESULTS_FILE = "results.json"


# ---- learners and envs ----------------------------------------------------------------------------


def learners() -> dict[str, type[ConstrainedPPO]]:
    """Every registered learner (built-in and from installed plugins), by name."""
    from crax.plugins import registry

    return dict(registry().learners)


def get_learner(learner: str | type[ConstrainedPPO]) -> type[ConstrainedPPO]:
    """A learner class from its registered name (ValueError listing the valid names) or the class itself."""
    if isinstance(learner, type):
        if not issubclass(learner, ConstrainedPPO):
            raise ValueError(f"{learner.__qualname__} is not a ConstrainedPPO learner")
        return learner
    from crax.plugins import registry

    return registry().get("learners", learner)


def env_class(env_id: str) -> type[Env]:
    """The :class:`Env` subclass named by a ``package.module:EnvClass`` id (ValueError otherwise)."""
    module_name, _, attr = env_id.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot import env class {env_id!r}: {e}") from None
    if not (isinstance(cls, type) and issubclass(cls, Env)):
        raise ValueError(f"{env_id!r} is not a crax.env.Env subclass")
    return cls


def make_env(env_id: str, env_kwargs: dict[str, Any] | None = None) -> Env:
    """``crax.make(env_id, **env_kwargs)``, or ``EnvClass(**env_kwargs)`` for ``module:EnvClass`` ids."""
    env_kwargs = dict(env_kwargs or {})
    if ":" in env_id:
        return env_class(env_id)(**env_kwargs)
    import crax

    return crax.make(env_id, **env_kwargs)


def _env_label(env: str | Env) -> str:
    if isinstance(env, str):
        return env
    return f"{type(env).__module__}:{type(env).__qualname__}"


# ---- training -------------------------------------------------------------------------------------


@dataclasses.dataclass
class TrainResult:
    """What a training run produced.

    Attributes:
      run_dir: the run folder.
      learner: learner name.
      env: env id (or ``module:Class``).
      config: the resolved learner config.
      env_steps: environment steps trained, per seed.
      final: per seed, ``{"return", "cost", "length", "safe"}`` of the last evaluation (or, with
        ``num_evals == 0``, of the last training episodes).
      evals: every evaluation: ``{"step", "return": [per seed], "cost": [...], "length": [...]}``.
      history: every logged record of ``metrics.jsonl`` (``step``, ``seed`` and scalars).
      trainer, state: the compiled trainer and final :class:`crax.learners.TrainState`
        (``trainer.learner(state, seed)`` gives a seed's NNX module).
    """

    run_dir: Path
    learner: str
    env: str
    config: PPOConfig
    env_steps: int
    final: list[dict[str, Any]]
    evals: list[dict[str, Any]]
    history: list[dict[str, Any]]
    trainer: Trainer
    state: Any


def _eval_iterations(total: int, num_evals: int) -> set[int]:
    return {max(1, round(total * (k + 1) / num_evals)) for k in range(num_evals)} if num_evals else set()


INIT_PARTS = ("actor", "reward_critic", "normalizer")
"""What a run initialised from another (``init_from``) copies by default: the policy, the reward
critic and the observation normalizer; the cost critic, multipliers and optimizer start fresh."""


def train(
    learner: str | type[ConstrainedPPO] | None,
    config: PPOConfig | None = None,
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
            envs = [(env, _env_label(env))]
        else:
            envs = [(make_env(record["env"], env_kwargs), record["env"])]
        run_dir = Path(run_dir)
    else:
        cls = get_learner(learner)
        if stages:
            if len(stages) < 2:
                raise ValueError(f"a curriculum needs at least two stages, got {list(stages)}")
            envs = [(make_env(e, env_kwargs), e) for e in stages]
        else:
            envs = [(env if isinstance(env, Env) else make_env(env, env_kwargs), _env_label(env))]
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
    trainers = [Trainer(cls, config, e) for e, _ in envs]
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


def complete_run(learner: str | type[ConstrainedPPO], config: PPOConfig, env: str | Env, run_dir: str | Path, *,
                 progress: bool | None = None, init_from: str | Path | None = None,
                 env_kwargs: dict[str, Any] | None = None) -> TrainResult | None:
    """Brings ``run_dir`` to the end of ``config``'s budget, whatever state it was left in: trains a
    new run where it holds none, resumes from the newest checkpoint (with the ``env_kwargs`` stored
    in it), starts over where the run stopped before its first checkpoint (nothing to keep); None
    where the run was already complete."""
    run_dir = Path(run_dir)
    if (run_dir / ckpt.CONFIG_FILE).exists():
        if ckpt.checkpoints(run_dir):
            try:
                return train(None, config, run_dir=run_dir, resume=True, progress=progress)
            except RunComplete:
                return None
        shutil.rmtree(run_dir)
    return train(learner, config, env, run_dir=run_dir, progress=progress, init_from=init_from, env_kwargs=env_kwargs)


def _initial_model(trainer: Trainer, state, init: dict[str, Any]):
    """``state`` with the learner parts ``init["parts"]`` copied from the final checkpoint of ``init["run_dir"]``."""
    record = ckpt.read_config(init["run_dir"])
    src_cls = get_learner(record["learner"])
    src_config = ckpt.config_from_dict(src_cls.Config, record["config"])
    src_env = make_env(record["env"], record["env_kwargs"])
    source = Trainer(src_cls, src_config, src_env)
    if src_config.num_seeds != trainer.config.num_seeds:
        raise ValueError(f"{init['run_dir']!r} trained {src_config.num_seeds} seed(s); this run has "
                         f"{trainer.config.num_seeds}")
    restored = ckpt.load_checkpoint(init["run_dir"], source.abstract_state())["state"].model
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


def _finite_mean(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def _per_seed(metrics: dict[str, np.ndarray], seed: int, j: int) -> dict[str, float]:
    return {k: float(v[seed, j]) for k, v in metrics.items()}


class RunComplete(ValueError):
    """Resuming a run that already trained its ``total_steps``."""


class TrainingDiverged(RuntimeError):
    """A loss or parameter became non-finite; the run folder keeps its last good checkpoint."""


class StorageFailed(RuntimeError):
    """A checkpoint or the metrics could not be written (a full disk); the message says how to resume."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (what SLURM, Kubernetes and most schedulers send before killing a job), raised where
    Ctrl-C's KeyboardInterrupt would be, so a terminated run is checkpointed the same way."""


class _StopOnSigterm:
    """While installed, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: a no-op)."""

    def __init__(self):
        self._previous = None

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._raise)

    @staticmethod
    def _raise(signum, frame) -> None:
        raise Terminated()

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None


def check_seed(seed: int, name: str = "config field 'seed'") -> None:
    """ValueError unless ``seed`` fits the 64-bit integer a JAX PRNG key is made from."""
    if not -(2**63) <= seed < 2**63:
        raise ValueError(f"{name} must be a 64-bit integer, in [-2**63, 2**63 - 1]; got {seed}")


def _memory_available(device: jax.Device) -> int | None:
    """Bytes a run can use on ``device``: an accelerator's allocator limit, or the host's available
    memory for a CPU device (None where neither is known)."""
    if device.platform == "cpu":
        try:
            with open("/proc/meminfo", encoding="ascii") as f:
                info = dict(line.split(":", 1) for line in f)
            return int(info["MemAvailable"].split()[0]) * 1024
        except (OSError, KeyError, ValueError):
            return None
    stats = device.memory_stats() or {}
    return stats.get("bytes_limit")


def memory_estimate(trainer: Trainer) -> int:
    """A lower bound on the bytes one training call holds: the whole train state (learners, optimizers,
    env states of every env and seed) plus the rollout's observations, actions, log-probabilities,
    rewards, costs, values and flags of one iteration (float32)."""
    c = trainer.config
    state = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(trainer.abstract_state()))
    per_step = 2 * trainer.observation_size + 3 * trainer.action_size + 8
    return int(state + 4 * per_step * c.steps_per_iteration * c.num_seeds)


def check_memory(trainer: Trainer) -> None:
    """ValueError when :func:`memory_estimate` exceeds the memory of the devices the run uses, instead of
    an allocation that fails (or swaps until a time limit) after minutes of compiling."""
    devices = default_devices(trainer.config.num_devices)
    local = [d for d in devices if d.process_index == jax.process_index()]
    limits = [_memory_available(d) for d in local]
    if not limits or None in limits:
        return
    have = limits[0] if local[0].platform == "cpu" else sum(limits)  # CPU devices share the host's memory
    need = memory_estimate(trainer) * len(local) // len(devices)  # this process's share
    if need > have:
        c = trainer.config
        raise ValueError(
            f"this run needs at least {need / 2**30:,.1f} GiB (the train state of {c.num_seeds} seed(s) × "
            f"{c.num_envs:,} envs and one iteration's rollout of {c.steps_per_iteration:,} steps per seed), more "
            f"than the {have / 2**30:,.1f} GiB available on {local[0].platform} ({len(local)} device(s)); "
            f"lower --num-envs (with --batch-size × --num-minibatches a multiple of it) or --num-seeds")


def _eval_summary(ev: dict[str, dict[str, np.ndarray]], seed: int) -> dict[str, dict[str, float]]:
    """Mean and spread over the evaluation episodes of one seed, per evaluated policy."""
    out = {}
    for mode, values in ev.items():
        out[mode] = {}
        for k, v in values.items():
            episodes = np.asarray(v[seed], np.float64)
            out[mode][k] = float(episodes.mean())
            out[mode][f"{k}_std"] = float(episodes.std())
    return out


def _eval_record(step: int, summaries: list[dict[str, dict[str, float]]]) -> dict[str, Any]:
    return {"step": step, **{mode: {k: [s[mode][k] for s in summaries] for k in summaries[0][mode]}
                             for mode in summaries[0]}}


def _verdict(summary: dict[str, dict[str, float]], policy: str, bound: float) -> dict[str, Any]:
    judged = summary[policy]
    return {"return": judged["return"], "cost": judged["cost"], "length": judged["length"],
            "return_std": judged["return_std"], "cost_std": judged["cost_std"], "policy": policy,
            "safe": bool(judged["cost"] < bound), **summary}


def _last_episodes(run_dir: Path, seeds: int) -> list[dict[str, float]]:
    """Each seed's last logged training-episode statistics (NaN where none was logged)."""
    last = [{"return": math.nan, "cost": math.nan, "length": math.nan} for _ in range(seeds)]
    for r in read_metrics(run_dir):
        if "episode/return" in r and r["seed"] < seeds:
            last[r["seed"]] = {k: r[f"episode/{k}"] for k in ("return", "cost", "length")}
    return last


def _stage_bounds(config: PPOConfig, num_stages: int) -> list[int]:
    """Cumulative iteration counts at the end of each stage (the budget split equally)."""
    per_stage = -(-config.num_iterations // num_stages)
    return [0, *(per_stage * (k + 1) for k in range(num_stages))]


def _stage_of(bounds: list[int], iteration: int) -> int:
    """The stage that runs iteration ``iteration + 1``."""
    return max(k for k in range(len(bounds) - 1) if bounds[k] <= iteration)


def _resume_point(cls, config: PPOConfig, envs: list[tuple[Env, str]], trainers: list[Trainer], run_dir: Path,
                  record: dict[str, Any]) -> dict[str, Any]:
    """The newest checkpoint of a run to continue (:func:`crax.checkpoint.load_checkpoint`'s dict).

    Raises :class:`RunComplete` when the run has trained its stored budget and ``config`` asks for no
    more (writing ``results.json`` from the metrics if the run stopped before writing it), and
    ValueError when ``config`` asks for fewer steps than an unfinished run has already trained.
    Nothing in the folder changes otherwise, ``config.json`` included."""
    steps_per_iter = config.steps_per_iteration
    bounds = _stage_bounds(config, len(envs))

    def template(env_steps: int):  # a checkpoint holds the envs of the stage that ran its last iteration
        return trainers[_stage_of(bounds, env_steps // steps_per_iter - 1)].abstract_state()

    restored = ckpt.load_checkpoint(run_dir, template)
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
        _write_results(cls, stored, envs, stored_bounds, run_dir, _last_episodes(run_dir, stored.num_seeds),
                       write=distributed.is_main())
        written = " (written now from its metrics)"
    fewer = (f" (--total-steps {config.total_steps:,} asks for no more; config.json is unchanged)"
             if asked < trained else "")
    raise RunComplete(f"run {str(run_dir)!r} is complete: it trained {trained:,} steps{fewer}; its results are "
                      f"in {run_dir / RESULTS_FILE}{written}. Pass a larger --total-steps to extend it.")


def _train_loop(cls, config: PPOConfig, envs: list[tuple[Env, str]], trainers: list[Trainer], run_dir: Path,
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
    last_episode = _last_episodes(run_dir, seeds)  # a resumed run reports its last episodes before new ones end
    it = last_ckpt = start_iter

    def storage_failed(what: str, e: OSError) -> StorageFailed:
        found = ckpt.checkpoints(run_dir)
        kept = (f"the newest checkpoint is still {found[-1][1]} (step {found[-1][0]:,})" if found
                else "no checkpoint was written yet")
        return StorageFailed(f"could not write {what} to {run_dir}: {e.strerror or e}; {kept}. Free space (or fix "
                             f"the folder) and resume with: crax train --resume {run_dir}")

    def commit(state, it: int) -> None:
        """Makes the records up to iteration ``it`` durable, then writes its checkpoint (DECISIONS 44)."""
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

    stop = _StopOnSigterm()
    try:
        stop.install()
        while it < total_iters:
            stage = stage_of(it)
            if stage != state_stage:
                state, state_stage = enter(stage, state), stage
            trainer = trainers[stage]
            n = min(config.iterations_per_call, bounds[stage + 1] - it)
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
                per_seed = [{**_per_seed(metrics, s, j), "perf/steps_per_second": sps,
                             **({"curriculum/stage": stage} if len(envs) > 1 else {})} for s in range(seeds)]
                for s, values in enumerate(per_seed):
                    if values["episode/count"] > 0:
                        last_episode[s] = {k: values[f"episode/{k}"] for k in ("return", "cost", "length")}
                    else:  # no episode finished in this iteration: nothing to report for episodes
                        for k in [k for k in values if k.startswith("episode/") and k != "episode/count"]:
                            values.pop(k)
                logger.log(step, per_seed)
                multipliers = {k.removeprefix("multiplier/"): float(np.mean([v[k] for v in per_seed]))
                               for k in per_seed[0] if k.startswith("multiplier/")}
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
                summaries = [_eval_summary(ev, s) for s in range(seeds)]
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
            bar.update(step, sps, _finite_mean([e["return"] for e in last_episode]),
                       _finite_mean([e["cost"] for e in last_episode]), multipliers)
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
        final, evals, history = _write_results(cls, config, envs, bounds, run_dir, last_episode, write=main)
    except OSError as e:
        raise storage_failed(RESULTS_FILE, e) from None
    return TrainResult(run_dir=run_dir, learner=cls.name, env=env_id, config=config, env_steps=total_iters * steps_per_iter,
                       final=final, evals=evals, history=history, trainer=trainers[state_stage], state=state)


def _write_results(cls, config: PPOConfig, envs: list[tuple[Env, str]], bounds: list[int], run_dir: Path,
                   last_episode: list[dict[str, float]], write: bool = True):
    """Writes ``results.json`` (unless ``write`` is False) from the run's ``metrics.jsonl``; returns
    ``(final, evals, history)``."""
    seeds, steps_per_iter = config.num_seeds, config.steps_per_iteration
    history = read_metrics(run_dir)
    evals = _evals_from_history(history, seeds)
    if evals:
        last = evals[-1]
        summaries = [{mode: {k: last[mode][k][s] for k in last[mode]} for mode in EVAL_POLICIES}
                     for s in range(seeds)]
        final = [_verdict(sm, config.eval_policy, config.safety_bound) for sm in summaries]
    else:
        final = [dict(e, policy="training episodes", safe=bool(e["cost"] < config.safety_bound))
                 for e in last_episode]
    results = {"learner": cls.name, "env": envs[-1][1], "env_steps": bounds[-1] * steps_per_iter,
               "safety_bound": config.safety_bound, "eval_policy": config.eval_policy, "final": final, "evals": evals}
    if len(envs) > 1:
        results["stages"] = [{"env": e, "first_step": b * steps_per_iter + 1, "last_step": b2 * steps_per_iter}
                             for (_, e), b, b2 in zip(envs, bounds, bounds[1:], strict=False)]
    if write:
        ckpt.atomic_write_bytes(run_dir / RESULTS_FILE, (json.dumps(results, indent=2) + "\n").encode())
    return final, evals, history


def _evals_from_history(history: list[dict[str, Any]], seeds: int) -> list[dict[str, Any]]:
    """Every evaluation in ``metrics.jsonl`` (those of earlier sessions of a resumed run too)."""
    by_step: dict[int, list] = {}
    for r in history:
        if f"eval/{EVAL_POLICIES[0]}/return" not in r or r["seed"] >= seeds:
            continue
        summary = {mode: {k.split("/", 2)[2]: v for k, v in r.items() if k.startswith(f"eval/{mode}/")}
                   for mode in EVAL_POLICIES}
        by_step.setdefault(r["step"], [None] * seeds)[r["seed"]] = summary
    return [_eval_record(step, sums) for step, sums in sorted(by_step.items()) if all(sums)]


# ---- evaluation -----------------------------------------------------------------------------------


def evaluate(run_dir: str | Path, episodes: int = 128, *, seed: int = 0, env: Env | None = None,
             policy: str | None = None) -> dict[str, Any]:
    """Evaluates the latest checkpoint of a run: ``episodes`` episodes per trained seed and policy.

    Both the stochastic and the deterministic policy run; ``policy`` (default: the run's
    ``eval_policy``, stochastic unless changed) is the one judged. Returns ``{"learner", "env",
    "episodes", "env_steps", "safety_bound", "policy", "return", "cost", "length", "return_std",
    "cost_std", "safe", "stochastic": {...}, "deterministic": {...}, "per_seed": [...]}``: means
    and standard deviations over all seeds' episodes; ``safe`` is ``cost < safety_bound``.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    check_seed(seed, "seed")
    record, cls, config, trainer, restored, policy = _restore(run_dir, episodes, env, policy)
    model = jax.tree.map(jax.numpy.asarray, restored["state"].model)
    ev = jax.device_get(trainer.evaluate_model(model, jax.random.key(seed)))
    per_seed = [_verdict(_eval_summary(ev, s), policy, config.safety_bound) for s in range(config.num_seeds)]
    pooled = {mode: {**{k: float(np.mean(v)) for k, v in vals.items()},
                     **{f"{k}_std": float(np.std(v)) for k, v in vals.items()}} for mode, vals in ev.items()}
    return {"learner": cls.name, "env": record["env"], "episodes": int(episodes), "env_steps": restored["env_steps"],
            "safety_bound": config.safety_bound, **_verdict(pooled, policy, config.safety_bound),
            "per_seed": per_seed}


def _restore(run_dir: str | Path, episodes: int, env: Env | None, policy: str | None):
    """A run's record, learner class, config (``eval_envs=episodes``), trainer, latest checkpoint and
    judged policy (``policy``, or the run's ``eval_policy``; ValueError if not in EVAL_POLICIES)."""
    record = ckpt.read_config(run_dir)
    cls = get_learner(record["learner"])
    config = ckpt.config_from_dict(cls.Config, record["config"])
    policy = config.eval_policy if policy is None else policy
    if policy not in EVAL_POLICIES:
        raise ValueError(f"policy must be one of {', '.join(EVAL_POLICIES)}, got {policy!r}")
    config = dataclasses.replace(config, eval_envs=int(episodes))
    env_obj = env if env is not None else make_env(record["env"], record["env_kwargs"])
    trainer = Trainer(cls, config, env_obj)
    restored = ckpt.load_checkpoint(run_dir, trainer.abstract_state())
    return record, cls, config, trainer, restored, policy


def eval_video(run_dir: str | Path, path: str | Path, *, seed: int = 0, policy: str | None = None,
               camera: str = "track", width: int = 480, height: int = 480) -> Path:
    """Renders one evaluation episode of the latest checkpoint's seed-0 learner to a video
    (:mod:`crax.render`): ``policy`` (default: the run's judged ``eval_policy``), on the env the
    learner sees (its ``wrap_env``), episode drawn from ``seed``. Returns the path."""
    from crax import render

    path = render.video_path(path)
    _, _, _, trainer, restored, policy = _restore(run_dir, 1, None, policy)
    act = _policy_fn(trainer, restored["state"].model, 0, policy == "deterministic")
    env = trainer.eval_env.env  # the single env evaluation steps: EpisodeStats and the learner's wrap_env
    states = render.first_episode(render.rollout(env, act, jax.random.key(seed), env.episode_length))
    return render.save_video(env, states, path, camera=camera, width=width, height=height)


def _policy_fn(trainer: Trainer, model, seed: int, deterministic: bool) -> Callable:
    """``act(obs, key=None) -> action`` of trained seed ``seed`` of a (seed-batched) model state: the
    env's action ``tanh(u)`` for ``u`` the Gaussian's mean, or a sample from it drawn with ``key``."""
    from flax import nnx

    learner_state = jax.tree.map(lambda x: jax.numpy.asarray(x[seed]), model)

    def act(obs: jax.Array, key: jax.Array | None = None) -> jax.Array:
        learner = nnx.merge(trainer.graphdef, learner_state)[0]
        loc, scale = learner.policy(obs)
        if deterministic:
            return jax.numpy.tanh(loc)
        if key is None:
            raise ValueError("a sampled policy (deterministic=False) needs a key: act(obs, key)")
        return jax.numpy.tanh(loc + scale * jax.random.normal(key, loc.shape))

    return act


def load_policy(run_dir: str | Path, *, seed: int = 0, deterministic: bool = True,
                env: Env | None = None) -> Callable[..., jax.Array]:
    """A trained policy from the latest checkpoint of a run folder, as a jitted ``act(obs, key=None)``.

    ``act`` maps an observation (or a batch, leading axes free) of the env the learner sees to actions
    in ``[-1, 1]``: the mean action when ``deterministic`` (``key`` unused), else a sampled one, which
    needs a ``key``. The observation normalizer is inside. The learner sees the run's env through its
    ``wrap_env`` (PPO-Saute appends the remaining budget to the observation):
    ``Trainer(...).eval_env.env`` is that env, or ``runner.evaluate`` runs it for you.

    Args:
      run_dir: a run folder written by :func:`train`.
      seed: which trained seed's learner, in ``[0, num_seeds)``.
      deterministic: the mean action (True) or a sample (False).
      env: the env instance, for runs trained on an :class:`Env` object rather than an env id.

    Example::

        act = runner.load_policy("runs/PointGoal1-ppo-lag-20250101-120000")
        action = act(state.obs)
    """
    _, _, config, trainer, restored, _ = _restore(run_dir, 1, env, None)
    if not 0 <= seed < config.num_seeds:
        raise ValueError(f"seed must be in [0, {config.num_seeds}): the run trained {config.num_seeds} seed(s); "
                         f"got {seed}")
    return jax.jit(_policy_fn(trainer, restored["state"].model, seed, deterministic))


# ---- command line ---------------------------------------------------------------------------------

_RUN_FIELDS = ("env", "run_dir", "runs_root", "progress")


def _command_type(cls: type[ConstrainedPPO], more: tuple = ()) -> type:
    """``cls.Config`` plus the run options (and ``more``), as one flat frozen dataclass for tyro."""
    extra = [
        ("env", Annotated[str, tyro.conf.arg(help="Env id (crax.make) or import path package.module:EnvClass.")]),
        ("run_dir", Annotated[str | None, tyro.conf.arg(help="Run folder; default <runs-root>/<env>-<learner>-<time>.")],
         dataclasses.field(default=None)),
        ("runs_root", Annotated[str, tyro.conf.arg(help="Parent folder of new run folders.")],
         dataclasses.field(default="runs")),
        ("progress", Annotated[bool, tyro.conf.arg(help="Show progress: a bar on a terminal, a plain line every 10 iterations otherwise.")], dataclasses.field(default=True)),
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


def check_components_target(env_id: str, env_kwargs: dict[str, Any] | None) -> None:
    """ValueError when added components (``constraints``/``sensors``) meet a ``module:EnvClass`` env."""
    if env_kwargs and ":" in env_id:
        raise ValueError(f"constraints and sensors (--constraint, --sensor) are added to registered env ids "
                         f"(crax.make), not to the env class {env_id!r}")


def env_kwargs_of(args: Any) -> dict[str, Any] | None:
    """The ``crax.make`` keyword arguments of parsed ``--constraint``/``--sensor`` flags (None when
    neither is given). ValueError for a malformed flag, or flags on a ``module:EnvClass`` env."""
    env_kwargs = compose.parse_flags(args.constraint, args.sensor)
    check_components_target(args.env, env_kwargs)
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
"""``crax train``'s multi-host flags (:mod:`crax.distributed`)."""


def _join_cluster(prog: str, args: Any) -> None:
    """Initializes jax.distributed when ``--coordinator-address`` was given (before any JAX work)."""
    if args.coordinator_address is None:
        if args.num_processes is not None or args.process_id is not None:
            _fail(prog, ValueError("--num-processes and --process-id need --coordinator-address HOST:PORT"))
        return
    try:
        distributed.initialize(args.coordinator_address, args.num_processes, args.process_id)
    except ValueError as e:
        _fail(prog, e)


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


def _fail(prog: str, error: Exception) -> None:
    print(f"{prog}: error: {error}", file=sys.stderr)
    raise SystemExit(2)


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
        _fail(prog, e)
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
            _fail(prog, e)
        result = run_or_exit(prog, train, cls, config, run_dir=args.resume, resume=True,
                              progress=None if args.progress else False)
        if distributed.is_main():
            print_final(result)
        return

    cls, config, args = parse_learner_command(argv, prog, TRAIN_DESCRIPTION,
                                              extra=COMPONENT_FLAGS + DISTRIBUTED_FLAGS)
    _join_cluster(prog, args)
    try:
        env_kwargs = env_kwargs_of(args)
    except ValueError as e:
        _fail(prog, e)
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
    except ValueError as e:
        _fail(prog, e)
    commands = {name: _command_type(cls, extra) for name, cls in table.items()}
    union = Union[tuple(  # noqa: UP007 - a runtime-built union needs typing.Union
        Annotated[cmd, tyro.conf.subcommand(name, description=(table[name].__doc__ or "").strip().splitlines()[0])]
        for name, cmd in commands.items()
    )]
    try:
        args = tyro.cli(union, args=argv, prog=prog, description=description)
    except ValueError as e:  # a config check in __post_init__ (tyro re-raises it)
        _fail(prog, e)
    name = next(n for n, cmd in commands.items() if type(args) is cmd)
    cls = table[name]
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls.Config)}
    try:
        config = cls.Config(**values)
    except ValueError as e:
        _fail(prog, e)
    if config.total_steps < config.steps_per_iteration:
        print(f"{prog}: note: --total-steps {config.total_steps:,} is less than one iteration; training one whole "
              f"iteration of {config.steps_per_iteration:,} steps (batch_size × num_minibatches × unroll_length)",
              file=sys.stderr)
    return cls, config, args


@dataclasses.dataclass(frozen=True)
class EvalArgs:
    """Evaluate the latest checkpoint of a run: the stochastic and the deterministic policy."""

    run_dir: Annotated[tyro.conf.Positional[str], tyro.conf.arg(metavar="RUN_DIR")]
    """Run folder written by crax train."""
    episodes: int = 128
    """Episodes per trained seed and policy (run in parallel)."""
    seed: int = 0
    """Random seed of the evaluation episodes."""
    policy: Literal["stochastic", "deterministic"] | None = None
    """Policy the safe verdict is taken on (default: the run's eval_policy, stochastic unless changed)."""
    json: bool = False
    """Print the result as JSON."""
    video: Annotated[str | None, tyro.conf.arg(metavar="OUT.mp4|OUT.gif")] = None
    """Also write a video (.mp4 or .gif) of one evaluation episode of seed 0's learner with the judged policy."""
    camera: Literal["track", "top"] = "track"
    """Camera of the video: track follows the agent, top looks down on the arena."""
    width: int = 480
    """Video width in pixels."""
    height: int = 480
    """Video height in pixels."""


def eval_main(argv: list[str]) -> None:
    """``crax eval RUN_DIR [--episodes N] [--policy P]``: return and cost of both policies, safe or not safe."""
    prog = "crax eval"
    args = tyro.cli(EvalArgs, args=argv, prog=prog)
    from crax.render import RenderingUnavailable, video_path

    try:
        if args.video is not None:
            video_path(args.video)  # a bad suffix fails before the evaluation runs
        res = evaluate(args.run_dir, args.episodes, seed=args.seed, policy=args.policy)
        if args.video is not None:
            res["video"] = str(eval_video(args.run_dir, args.video, seed=args.seed, policy=res["policy"],
                                          camera=args.camera, width=args.width, height=args.height))
    except (ValueError, RenderingUnavailable) as e:
        _fail(prog, e)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(f"{res['learner']} on {res['env']} after {res['env_steps']:,} steps, {res['episodes']} episodes per seed "
          "and policy (mean ± std over episodes)")
    for mode in EVAL_POLICIES:
        for s, p in enumerate(res["per_seed"]):
            m = p[mode]
            print(f"  {mode:<13} seed {s}: return {m['return']:.3f} ± {m['return_std']:.3f}  "
                  f"cost {m['cost']:.3f} ± {m['cost_std']:.3f}  length {m['length']:.1f}")
    verdict = "safe" if res["safe"] else "not safe"
    print(f"{res['policy']} policy: mean return {res['return']:.3f}  mean cost {res['cost']:.3f}  -> {verdict} "
          f"(cost {'<' if res['safe'] else '>='} bound {res['safety_bound']:g})")
    if "video" in res:
        print(f"video: {res['video']}")
