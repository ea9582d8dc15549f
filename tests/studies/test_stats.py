"""Student-t intervals, the IQM with stratified-bootstrap intervals and P(X > Y) on hand-checked data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from crax.studies import stats

T_975_2 = 4.302652729911275  # Student t quantile 0.975 with 2 degrees of freedom


def test_mean_interval_is_student_t_over_seeds():
    mean, (lo, hi) = stats.mean_interval([1.0, 2.0, 3.0])  # s = 1, n = 3
    assert mean == 2.0
    assert (hi - lo) / 2 == pytest.approx(T_975_2 / math.sqrt(3))
    assert stats.mean_interval([7.0]) == (7.0, None)
    assert stats.mean_interval([4.0, 4.0, 4.0]) == (4.0, (4.0, 4.0))
    with pytest.raises(ValueError, match="at least one value"):
        stats.mean_interval([])


def test_iqm_drops_a_quarter_from_each_end():
    assert stats.iqm(np.arange(1, 9)) == 4.5  # mean of 3, 4, 5, 6
    assert stats.iqm(np.arange(1, 11)) == 5.5  # int(2.5) = 2 cut from each end: mean of 3..8
    assert stats.iqm([5.0]) == 5.0
    x = np.random.default_rng(0).normal(size=(4, 13))
    np.testing.assert_allclose(stats.iqm(x, axis=1), sps.trim_mean(x, 0.25, axis=1))
    assert stats.iqm(x) == pytest.approx(sps.trim_mean(x, 0.25, axis=None))


def test_iqm_interval_of_constant_data_has_zero_width():
    assert stats.iqm_interval([[3.0, 3.0, 3.0], [3.0, 3.0]]) == (3.0, (3.0, 3.0))


def test_bootstrap_is_stratified_by_task():
    # One run per task: resampling within each task always draws the same runs, so the interval
    # collapses to the point (a pooled bootstrap would not).
    point, ci = stats.iqm_interval([[1.0], [5.0], [2.0], [8.0]])
    assert point == 3.5 and ci == (3.5, 3.5)


def test_iqm_interval_brackets_the_point_and_is_reproducible():
    rng = np.random.default_rng(1)
    tasks = [rng.normal(size=5), rng.normal(size=3) + 1.0, rng.normal(size=4)]
    point, (lo, hi) = stats.iqm_interval(tasks, reps=500)
    assert point == pytest.approx(stats.iqm(np.concatenate(tasks)))
    assert lo < point < hi
    assert stats.iqm_interval(tasks, reps=500) == (point, (lo, hi))


def test_probability_of_improvement_on_hand_data():
    # task 1: 2>1, 5>1, 5>3, 2<3 -> 3/4; task 2: 0 < 1 -> 0; mean over tasks 3/8
    p, _ = stats.probability_of_improvement([[2.0, 5.0], [0.0]], [[1.0, 3.0], [1.0]])
    assert p == 0.375
    # ties count one half: 2=2 (½), 5>2, 5>3, 2<3 -> 2.5/4
    assert stats.probability_of_improvement([[2.0, 5.0]], [[2.0, 3.0]])[0] == 0.625
    assert stats.probability_of_improvement([[1.0, 1.0]], [[1.0]])[0] == 0.5
    assert stats.probability_of_improvement([[1.0, 2.0, 3.0]], [[0.0, 0.0]]) == (1.0, (1.0, 1.0))


def test_probability_of_improvement_is_mann_whitney_and_complementary():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=6).round(1), rng.normal(0.5, size=5).round(1)
    p_xy, (lo, hi) = stats.probability_of_improvement([x], [y], reps=500)
    assert p_xy == pytest.approx(sps.mannwhitneyu(x, y).statistic / (x.size * y.size))
    assert p_xy + stats.probability_of_improvement([y], [x])[0] == pytest.approx(1.0)
    assert lo <= p_xy <= hi
    with pytest.raises(ValueError, match="same tasks"):
        stats.probability_of_improvement([x, x], [y])
