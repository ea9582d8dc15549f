"""What a finished run reports: :class:`TrainResult`, evaluation summaries, the safe verdict and ``results.json``."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

from crax.core.env import Env
from crax.learners.shared import risk
from crax.learners.shared.config import EVAL_POLICIES
from crax.learners.shared.trainer import BaseTrainer
from crax.runs import files
from crax.runs.metrics import read_metrics

RESULTS_FILE = "results.json"


@dataclasses.dataclass
class TrainResult:
    """What a training run produced.

    Attributes:
      run_dir: the run folder.
      learner: learner name.
      env: env id (or ``module:Class``).
      config: the resolved learner config.
      env_steps: environment steps trained, per seed.
      final: per seed, ``{"return", "cost", "length", "safe", "cost_rate"}`` of the last evaluation (or, with
        ``num_evals == 0``, of the last training episodes).
      evals: every evaluation: ``{"step", "return": [per seed], "cost": [...], "length": [...]}``.
      history: every logged record of ``metrics.jsonl`` (``step``, ``seed`` and scalars).
      trainer, state: the compiled trainer and final :class:`crax.learners.TrainState`
        (``trainer.learner(state, seed)`` gives a seed's NNX module).
    """

    run_dir: Path
    learner: str
    env: str
    config: Any
    env_steps: int
    final: list[dict[str, Any]]
    evals: list[dict[str, Any]]
    history: list[dict[str, Any]]
    trainer: BaseTrainer
    state: Any


def finite_mean(values: list[float]) -> float:
    """The mean of the finite values (NaN when there is none)."""
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def seed_metrics(metrics: dict[str, np.ndarray], seed: int, j: int) -> dict[str, float]:
    """One seed's scalars of the ``j``-th iteration of a compiled call (``metrics`` are [seed, iteration])."""
    return {k: float(v[seed, j]) for k, v in metrics.items()}


CVAR_ALPHA = 0.1
"""The worst fraction of evaluation episodes whose mean cost an evaluation reports (``cost_cvar``)."""


def eval_summary(ev: dict[str, dict[str, np.ndarray]], seed: int | None) -> dict[str, dict[str, float]]:
    """Mean and spread over the evaluation episodes of one seed (None: every seed's), per evaluated
    policy, and the safety the mean cost does not show: ``over_bound`` (the fraction of episodes whose
    cost exceeds the bound), ``cost_cvar`` (the mean cost of the worst :data:`CVAR_ALPHA` of them) and
    ``costly_step_fraction`` (the fraction of steps with a positive cost)."""
    out = {}
    for mode, values in ev.items():
        out[mode] = {}
        episodes = {k: np.asarray(v if seed is None else v[seed], np.float64).reshape(-1) for k, v in values.items()}
        for k, x in episodes.items():
            out[mode][k] = float(x.mean())
            out[mode][f"{k}_std"] = float(x.std())
        out[mode]["cost_cvar"] = float(risk.cvar(episodes["cost"], CVAR_ALPHA))
        if "costly_steps" in episodes:
            out[mode]["costly_step_fraction"] = float(episodes["costly_steps"].sum() / max(episodes["length"].sum(), 1.0))
    return out


def eval_record(step: int, summaries: list[dict[str, dict[str, float]]]) -> dict[str, Any]:
    """One evaluation as ``results.json`` lists it: ``{"step", <policy>: {<stat>: [per seed]}}``."""
    return {"step": step, **{mode: {k: [s[mode][k] for s in summaries] for k in summaries[0][mode]}
                             for mode in summaries[0]}}


def verdict(summary: dict[str, dict[str, float]], policy: str, bound: float) -> dict[str, Any]:
    """A seed's final record: the judged ``policy``'s return and cost, safe when its cost < ``bound``."""
    judged = summary[policy]
    return {"return": judged["return"], "cost": judged["cost"], "length": judged["length"],
            "return_std": judged["return_std"], "cost_std": judged["cost_std"], "policy": policy,
            "safe": bool(judged["cost"] < bound), **summary}


def last_episodes(run_dir: Path, seeds: int) -> list[dict[str, float]]:
    """Each seed's last logged training-episode statistics (NaN where none was logged)."""
    last = [{"return": math.nan, "cost": math.nan, "length": math.nan} for _ in range(seeds)]
    for r in read_metrics(run_dir):
        if "episode/return" in r and r["seed"] < seeds:
            last[r["seed"]] = {k: r[f"episode/{k}"] for k in ("return", "cost", "length")}
    return last


def write_results(cls, config: Any, envs: list[tuple[Env, str]], bounds: list[int], run_dir: Path,
                   last_episode: list[dict[str, float]], write: bool = True):
    """Writes ``results.json`` (unless ``write`` is False) from the run's ``metrics.jsonl``; returns
    ``(final, evals, history)``."""
    seeds, steps_per_iter = config.num_seeds, config.steps_per_iteration
    history = read_metrics(run_dir)
    evals = evals_from_history(history, seeds)
    if evals:
        last = evals[-1]
        summaries = [{mode: {k: last[mode][k][s] for k in last[mode]} for mode in EVAL_POLICIES}
                     for s in range(seeds)]
        final = [verdict(sm, config.eval_policy, config.safety_bound) for sm in summaries]
    else:
        final = [dict(e, policy="training episodes", safe=bool(e["cost"] < config.safety_bound))
                 for e in last_episode]
    for record, rate in zip(final, cost_rates(history, seeds), strict=True):
        record["cost_rate"] = rate
    results = {"learner": cls.name, "env": envs[-1][1], "env_steps": bounds[-1] * steps_per_iter,
               "safety_bound": config.safety_bound, "eval_policy": config.eval_policy, "final": final, "evals": evals}
    if len(envs) > 1:
        results["stages"] = [{"env": e, "first_step": b * steps_per_iter + 1, "last_step": b2 * steps_per_iter}
                             for (_, e), b, b2 in zip(envs, bounds, bounds[1:], strict=False)]
    if write:
        files.write_json(run_dir / RESULTS_FILE, results)
    return final, evals, history


def cost_rates(history: list[dict[str, Any]], seeds: int) -> list[float]:
    """Each seed's cost rate over training (Ray et al.'s Safety Gym metric): its cost per environment
    step over every step trained, the mean of the iterations' ``constraint/step_cost`` (iterations are
    of one size); NaN where none was logged."""
    per_seed: list[list[float]] = [[] for _ in range(seeds)]
    for r in history:
        if "constraint/step_cost" in r and r["seed"] < seeds:
            per_seed[r["seed"]].append(r["constraint/step_cost"])
    return [finite_mean(v) for v in per_seed]


def evals_from_history(history: list[dict[str, Any]], seeds: int) -> list[dict[str, Any]]:
    """Every evaluation in ``metrics.jsonl`` (those of earlier sessions of a resumed run too)."""
    by_step: dict[int, list] = {}
    for r in history:
        if f"eval/{EVAL_POLICIES[0]}/return" not in r or r["seed"] >= seeds:
            continue
        summary = {mode: {k.split("/", 2)[2]: v for k, v in r.items() if k.startswith(f"eval/{mode}/")}
                   for mode in EVAL_POLICIES}
        by_step.setdefault(r["step"], [None] * seeds)[r["seed"]] = summary
    return [eval_record(step, sums) for step, sums in sorted(by_step.items()) if all(sums)]
