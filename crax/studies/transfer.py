"""Transfer (docs/SPEC.md §6): PPO for half the budget, then a safe learner initialised from it.

The safe learner takes the PPO policy, reward critic and observation normalizer; its cost critic,
multipliers and optimizer start fresh. A transfer folder holds two ordinary run folders, ``ppo/``
and ``<learner>/`` (its ``config.json`` names the run it started from). ``--from RUN`` skips the
PPO phase and starts from an existing run. Running the same command with ``--run-dir`` of an
interrupted transfer skips the finished phase and resumes the unfinished one.

    crax transfer ppo-lag --env PointGoal3 --total-steps 4e6
    crax transfer ppo-lag --env PointGoal3 --from runs/PointGoal3-ppo-20261126-120000
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any

from crax import runs
from crax.learners.shared.learner import Learner
from crax.runs import checkpoint as ckpt
from crax.runs.envs import trainer_for
from crax.runs.transfer import INIT_PARTS, check_parts


def transfer(learner: str | type[Learner], config: Any = None, env: str = "PointGoal3", *,
             from_run: str | Path | None = None, run_dir: str | Path | None = None, runs_root: str | Path = "runs",
             progress: bool | None = None, env_kwargs: dict[str, Any] | None = None) -> runs.TrainResult:
    """Runs the transfer study (module docstring); returns the safe learner's run.

    ``config.total_steps`` is the whole budget: PPO trains half of it (with every field its config
    shares with PPO's), the safe learner the rest. With ``from_run`` the safe learner trains the second half only.
    ``env_kwargs`` (``crax.make``'s ``constraints``/``sensors``) apply to both phases.
    """
    cls = runs.get_learner(learner)
    config = config if config is not None else cls.Config()
    first = config.total_steps // 2
    ppo = runs.get_learner("ppo")
    if from_run is None:  # a learner that cannot take PPO's parts is refused before PPO trains
        ppo_fields = {f.name for f in dataclasses.fields(ppo.Config)}
        shared = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name in ppo_fields}
        ppo_config = ppo.Config(**{**shared, "total_steps": first})
        target_env = runs.make_env(env, env_kwargs)
        check_parts(trainer_for(ppo, ppo_config, target_env), trainer_for(cls, config, target_env),
                    INIT_PARTS, "the PPO phase")
    if run_dir is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = Path(runs_root) / f"{env}-transfer-{cls.name}-{stamp}"
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if from_run is None:
        runs.complete_run(ppo, ppo_config, env, run_dir / "ppo", progress=progress, env_kwargs=env_kwargs)
        from_run = run_dir / "ppo"
    else:
        ckpt.read_config(from_run)  # a clear error for a folder that is not a run
    safe_config = dataclasses.replace(config, total_steps=config.total_steps - first)
    result = runs.complete_run(cls, safe_config, env, run_dir / cls.name, progress=progress,
                                 init_from=Path(from_run), env_kwargs=env_kwargs)
    if result is None:
        raise runs.RunComplete(f"transfer {str(run_dir)!r} is complete; its results are in "
                                 f"{run_dir / cls.name / runs.RESULTS_FILE}")
    return result
