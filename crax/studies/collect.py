"""The runs a study reads: run folders found under paths and sweep manifests, their results and curves."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from crax.learners.shared.config import EVAL_POLICIES
from crax.runs import checkpoint as ckpt
from crax.runs import files
from crax.runs.envs import get_learner
from crax.runs.results import RESULTS_FILE

R = TypeVar("R", "RunResult", "RunCurves")

MANIFEST_FILE = "manifest.json"


def level_of(env_id: str) -> int | None:
    """The level of an env id: its trailing number (``PointGoal3`` → 3); None if it has none."""
    match = re.search(r"(\d+)$", env_id.rpartition(":")[2])
    return int(match.group(1)) if match else None


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Every run folder (a folder with ``config.json``) given directly or found under the given folders.

    A sweep folder contributes the cells its ``manifest.json`` lists (those that exist); any other
    folder is searched recursively. Raises ValueError for a missing path or when nothing is found.
    """
    found: dict[Path, None] = {}
    for p in map(Path, paths):
        if not p.is_dir():
            raise ValueError(f"{str(p)!r} is not a folder (expected run folders or sweep folders)")
        if (p / ckpt.CONFIG_FILE).exists():
            runs = [p]
        elif (p / MANIFEST_FILE).exists():
            runs = [p / d for d in manifest_dirs(p / MANIFEST_FILE) if (p / d / ckpt.CONFIG_FILE).exists()]
        else:
            runs = sorted(c.parent for c in p.rglob(ckpt.CONFIG_FILE))
        if not runs:
            raise ValueError(f"no crax run folder (a folder with {ckpt.CONFIG_FILE}) in {str(p)!r}")
        found.update((r.resolve(), None) for r in runs)
    return list(found)


def manifest_dirs(path: Path) -> list[str]:
    """The cell folders a sweep's ``manifest.json`` lists; ValueError naming the file when it is damaged."""
    manifest = files.read_json(path, "a crax sweep manifest")
    try:
        return [str(c["dir"]) for c in manifest.get("cells", [])]
    except (AttributeError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a crax sweep manifest: its cells are not a list of "
                         f"{{\"dir\": ...}} records ({type(e).__name__}: {e})") from None


@dataclasses.dataclass(frozen=True)
class RunResult:
    """The final evaluation of one run: per seed, the episodic return and cost of the judged policy, and
    what its mean cost hides (NaN where the run's results predate them, or for ``over_bound`` where the
    run stands in at another bound than its own: :func:`expand_bound_free`): the fraction of evaluation
    episodes over the bound, the CVaR of their cost, and the cost rate over training."""

    run_dir: Path
    learner: str
    env: str
    safety_bound: float
    policy: str
    env_steps: int
    returns: tuple[float, ...]
    costs: tuple[float, ...]
    over_bound: tuple[float, ...] = ()
    cost_cvar: tuple[float, ...] = ()
    cost_rate: tuple[float, ...] = ()

    @property
    def level(self) -> int | None:
        return level_of(self.env)


def _reads_bound(learner: str) -> bool:
    """The learner's ``reads_bound`` (True for a learner that is no longer installed)."""
    try:
        return get_learner(learner).reads_bound
    except ValueError:
        return True


def expand_bound_free(runs: Sequence[R]) -> list[R]:
    """``runs`` (results or curves) with each run of a learner that ignores the bound (PPO, PPO-Cost)
    repeated at every bound that the bound-reading runs of its env use, since the one run answers
    for all of them. Bounds where the same learner and env already have a run of their own (a sweep
    from before bound-free cells) are left to that run."""
    reads = {learner: _reads_bound(learner) for learner in {r.learner for r in runs}}
    bounds: dict[str, set[float]] = {}
    own: dict[tuple[str, str], list[float]] = {}
    for r in runs:
        if reads[r.learner]:
            bounds.setdefault(r.env, set()).add(r.safety_bound)
        own.setdefault((r.learner, r.env), []).append(r.safety_bound)
    out: list[R] = []
    for r in runs:
        if reads[r.learner] or not bounds.get(r.env):
            out.append(r)
            continue
        others = list(own[(r.learner, r.env)])
        others.remove(r.safety_bound)
        targets = sorted(bounds[r.env] - set(others)) or [r.safety_bound]
        out += [_at_bound(r, b) for b in targets]
    return out


def _at_bound(run: R, bound: float) -> R:
    """``run`` standing in at ``bound``; a result's ``over_bound``, measured against its own bound, is unknown at another."""
    if isinstance(run, RunResult) and bound != run.safety_bound:
        return dataclasses.replace(run, safety_bound=bound, over_bound=(math.nan,) * len(run.returns))  # type: ignore[return-value]
    return dataclasses.replace(run, safety_bound=bound)


def read_result(run_dir: str | Path, policy: str | None = None) -> RunResult | None:
    """A run's ``results.json`` (None while the run has not finished).

    ``policy``: None takes each seed's judged values (the run's ``eval_policy``); ``"stochastic"``
    or ``"deterministic"`` takes that policy's evaluation.
    """
    if policy is not None and policy not in EVAL_POLICIES:
        raise ValueError(f"policy must be one of {', '.join(EVAL_POLICIES)} (or None for the run's own), got {policy!r}")
    path = Path(run_dir) / RESULTS_FILE
    if not path.exists():
        return None
    res = files.read_json(path, "a crax results file")
    try:
        final = res["final"]
        if policy is not None:
            missing = [s for s, f in enumerate(final) if policy not in f]
            if missing:
                raise ValueError(f"{path} has no {policy} evaluation (the run evaluated no policy: num_evals=0)")
            final = [f[policy] for f in final]
        judged = policy or (final[0].get("policy", "?") if final else "?")
        evaluated = [f if policy is not None else f.get(f.get("policy"), {}) for f in final]

        def per_seed(records: list[dict], key: str) -> tuple[float, ...]:
            return tuple(float(r.get(key, math.nan)) if isinstance(r, dict) else math.nan for r in records)

        return RunResult(run_dir=Path(run_dir), learner=res["learner"], env=res["env"],
                         safety_bound=float(res["safety_bound"]), policy=judged, env_steps=int(res["env_steps"]),
                         returns=tuple(float(f["return"]) for f in final), costs=tuple(float(f["cost"]) for f in final),
                         over_bound=per_seed(evaluated, "over_bound"), cost_cvar=per_seed(evaluated, "cost_cvar"),
                         cost_rate=per_seed(res["final"], "cost_rate"))
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a crax results file ({type(e).__name__}: {e})") from None


@dataclasses.dataclass(frozen=True)
class RunCurves:
    """Training curves of one run: per seed, ``(steps, returns, costs)`` of the logged episode statistics."""

    run_dir: Path
    learner: str
    env: str
    safety_bound: float
    seeds: tuple[tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...]], ...]


def training_seconds(records: Iterable[dict], seeds: int) -> tuple[list[int], list[float]]:
    """The training calls' own time from a run's metric records: the env steps of seed 0's records
    that carry ``perf/steps_per_second`` (the rate over all seeds), and the seconds trained up to each,
    the steps since the previous one times ``seeds`` over that rate, summed (compiles and evaluations
    left out, as the rate leaves them out)."""
    rates = {int(r["step"]): float(r["perf/steps_per_second"]) for r in records
             if r.get("seed") == 0 and "perf/steps_per_second" in r}
    steps, seconds, elapsed, prev = sorted(rates), [], 0.0, 0
    for t in steps:
        elapsed += (t - prev) * seeds / rates[t]
        seconds.append(elapsed)
        prev = t
    return steps, seconds


def read_curves(run_dir: str | Path) -> RunCurves:
    """The ``episode/return`` and ``episode/cost`` records of a run's ``metrics.jsonl``, per seed
    (learner, env and bound from its ``config.json``, so unfinished runs can be plotted too)."""
    from crax.runs.metrics import read_metrics

    record = ckpt.read_config(run_dir)
    per_seed: dict[int, dict[int, tuple[float, float]]] = {}
    for r in read_metrics(run_dir):
        if "episode/return" in r and "episode/cost" in r and math.isfinite(r["episode/return"]):
            per_seed.setdefault(int(r["seed"]), {})[int(r["step"])] = (float(r["episode/return"]),
                                                                        float(r["episode/cost"]))
    seeds = []
    for s in sorted(per_seed):
        steps = sorted(per_seed[s])
        seeds.append((tuple(steps), tuple(per_seed[s][t][0] for t in steps), tuple(per_seed[s][t][1] for t in steps)))
    return RunCurves(run_dir=Path(run_dir), learner=record["learner"], env=record["env"],
                     safety_bound=float(record["config"].get("safety_bound", math.nan)), seeds=tuple(seeds))
