"""Statistics for study summaries: Student-t intervals over seeds, the interquartile mean with
stratified-bootstrap intervals, and the probability of improvement.

The IQM, its stratified bootstrap and the probability of improvement follow rliable (Agarwal et al.,
"Deep RL at the Edge of the Statistical Precipice", 2021): the IQM is scipy's ``trim_mean`` with 25%
cut from each end of all runs of all tasks pooled; the bootstrap resamples runs *within* each task
(stratified) and takes percentile intervals. They are implemented here with numpy because rliable
1.2 does not import next to pandas 3 (its pinned ``arch<8`` breaks on import), and the whole method
is a few vectorised lines. "Tasks" are given as a list of 1-D arrays, one per task, of any lengths.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats as sps

CONFIDENCE = 0.95
BOOTSTRAP_REPS = 2000


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, tuple[float, float] | None]:
    """Mean and Student-t confidence interval of the mean; the interval is None for fewer than 2 values."""
    x = np.asarray(values, np.float64)
    if x.size == 0:
        raise ValueError("mean_interval needs at least one value")
    mean = float(x.mean())
    if x.size < 2:
        return mean, None
    half = float(sps.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, (mean - half, mean + half)


def iqm(values: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """Interquartile mean: the mean after dropping ``int(0.25·n)`` values from each end (scipy's
    ``trim_mean(values, 0.25)``, the IQM of rliable). ``axis=None`` pools everything."""
    x = np.asarray(values, np.float64)
    if axis is None:
        x, axis = x.reshape(-1), 0
    x = np.sort(np.moveaxis(x, axis, -1), axis=-1)
    n = x.shape[-1]
    if n == 0:
        raise ValueError("iqm needs at least one value")
    cut = int(0.25 * n)
    out = x[..., cut:n - cut].mean(axis=-1)
    return float(out) if out.ndim == 0 else out


def _check_tasks(tasks: Sequence[Sequence[float]], name: str) -> list[np.ndarray]:
    arrays = [np.asarray(t, np.float64).reshape(-1) for t in tasks]
    if not arrays or any(a.size == 0 for a in arrays):
        raise ValueError(f"{name} needs at least one task and at least one run per task")
    return arrays


def _resample(tasks: list[np.ndarray], reps: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Per task, ``reps`` resamples (with replacement) of its runs: arrays of shape (reps, n_task)."""
    return [t[rng.integers(0, t.size, size=(reps, t.size))] for t in tasks]


def _percentile(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    lo, hi = np.percentile(samples, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def stratified_bootstrap(tasks: Sequence[Sequence[float]], statistic: Callable[[np.ndarray], np.ndarray | float], *,
                         reps: int = BOOTSTRAP_REPS, confidence: float = CONFIDENCE,
                         seed: int = 0) -> tuple[float, tuple[float, float]]:
    """A statistic of the pooled runs of all tasks and its stratified-bootstrap percentile interval.

    Each replicate resamples the runs of every task separately (so every task keeps its number of
    runs) and pools them. ``statistic`` maps pooled runs of shape ``(..., n)`` to shape ``(...)``.
    """
    arrays = _check_tasks(tasks, "stratified_bootstrap")
    point = float(np.asarray(statistic(np.concatenate(arrays)[None]))[0])
    pooled = np.concatenate(_resample(arrays, reps, np.random.default_rng(seed)), axis=1)
    return point, _percentile(np.asarray(statistic(pooled)), confidence)


def iqm_interval(tasks: Sequence[Sequence[float]], *, reps: int = BOOTSTRAP_REPS, confidence: float = CONFIDENCE,
                 seed: int = 0) -> tuple[float, tuple[float, float]]:
    """IQM of all runs of all tasks and its stratified-bootstrap interval."""
    return stratified_bootstrap(tasks, lambda runs: iqm(runs, axis=-1), reps=reps, confidence=confidence, seed=seed)


def _improvement(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(X > Y) + ½ P(X = Y) over all pairs of the last axis; leading axes are batch axes."""
    diff = x[..., :, None] - y[..., None, :]
    return (diff > 0).mean(axis=(-2, -1)) + 0.5 * (diff == 0).mean(axis=(-2, -1))


def probability_of_improvement(x_tasks: Sequence[Sequence[float]], y_tasks: Sequence[Sequence[float]], *,
                               reps: int = BOOTSTRAP_REPS, confidence: float = CONFIDENCE,
                               seed: int = 0) -> tuple[float, tuple[float, float]]:
    """P(X > Y) (ties count ½; the Mann–Whitney U over ``n·m``) per task, averaged over tasks, with a
    stratified-bootstrap interval (runs of X and of Y resampled within each task).

    ``x_tasks[i]`` and ``y_tasks[i]`` are the runs of two learners on the same task ``i``.
    """
    xs, ys = _check_tasks(x_tasks, "probability_of_improvement"), _check_tasks(y_tasks, "probability_of_improvement")
    if len(xs) != len(ys):
        raise ValueError(f"probability_of_improvement needs the same tasks for both, got {len(xs)} and {len(ys)}")
    point = float(np.mean([_improvement(x, y) for x, y in zip(xs, ys, strict=True)]))
    rng = np.random.default_rng(seed)
    boot = np.mean([_improvement(bx, by) for bx, by in zip(_resample(xs, reps, rng), _resample(ys, reps, rng),
                                                            strict=True)], axis=0)
    return point, _percentile(boot, confidence)

