"""Curves from hand-made metrics.jsonl: mean and 95% band over seeds, colours, bound lines, files."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from crax.studies import plot_runs
from crax.studies.plot import curve_band
from tests.studies.runs import write_run

T_975_1 = 12.706204736174705  # Student t quantile 0.975 with 1 degree of freedom


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "sweep"
    # two seeds of ppo-lag; seed 1 logged no finished episode at step 100
    write_run(root / "lag", "ppo-lag", "PointGoal1", 25,
              curves={0: [(100, 1.0, 30.0), (200, 2.0, 20.0)], 1: [(200, 4.0, 10.0)]})
    write_run(root / "ppo", "ppo", "PointGoal1", 25, curves={0: [(100, 5.0, 50.0), (200, 6.0, 60.0)]})
    write_run(root / "lag35", "ppo-lag", "PointGoal1", 35, curves={0: [(100, 1.5, 40.0)]})
    write_run(root / "empty", "ppo", "PointGoal2", 25, curves={})  # nothing logged yet: left out
    return root


def test_curve_band_is_mean_and_student_t_over_seeds():
    steps, mean, low, high = curve_band([((100, 200), (1.0, 2.0)), ((200,), (4.0,))])
    np.testing.assert_array_equal(steps, [100, 200])
    np.testing.assert_allclose(mean, [1.0, 3.0])
    # one seed at 100: no band; two at 200: s = √2, half-width t·s/√2 = t
    np.testing.assert_allclose(low, [1.0, 3.0 - T_975_1])
    np.testing.assert_allclose(high, [1.0, 3.0 + T_975_1])


def test_plot_has_a_panel_pair_per_env_and_bound(runs, tmp_path):
    out = tmp_path / "fig" / "curves.png"
    fig = plot_runs([runs], out)
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000
    axes = fig.axes
    assert len(axes) == 4  # (PointGoal1, 25) and (PointGoal1, 35); PointGoal2 logged nothing
    assert [ax.get_title() for ax in axes] == ["PointGoal1: episodic return (d = 25)", "PointGoal1: episodic cost",
                                               "PointGoal1: episodic return (d = 35)", "PointGoal1: episodic cost"]
    ret, cost = axes[0], axes[1]
    lines = {line.get_label(): line for line in cost.lines}
    assert set(lines) == {"ppo (1 seeds)", "ppo-lag (2 seeds)", "bound d = 25"}
    np.testing.assert_allclose(lines["ppo-lag (2 seeds)"].get_ydata(), [30.0, 15.0])
    np.testing.assert_allclose(lines["bound d = 25"].get_ydata(), [25.0, 25.0])
    assert lines["bound d = 25"].get_linestyle() == "--"
    np.testing.assert_allclose({line.get_label(): line for line in ret.lines}["ppo (1 seeds)"].get_ydata(), [5.0, 6.0])
    # one colour per learner, the same in every panel
    def colours(prefix):
        return {to_rgba(line.get_color()) for ax in axes for line in ax.lines if line.get_label().startswith(prefix)}

    lag_colours, ppo_colours = colours("ppo-lag"), colours("ppo (")
    assert len(lag_colours) == 1 and len(ppo_colours) == 1 and lag_colours != ppo_colours
    assert {ln.get_ydata()[0] for ln in axes[3].lines if ln.get_linestyle() == "--"} == {35.0}
    assert "ppo (1 seeds)" in {ln.get_label() for ln in axes[3].lines}  # PPO ignores d: its run is drawn at 35 too
    band = ret.collections[1]  # ppo-lag's band: 95% t interval of returns {2, 4} at step 200
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.max() == pytest.approx(3.0 + T_975_1) and ys.min() == pytest.approx(3.0 - T_975_1)
    assert not math.isnan(ys.sum())


def test_nothing_to_plot_is_a_clear_error(runs, tmp_path):
    with pytest.raises(ValueError, match="none of the runs has logged a finished episode"):
        plot_runs([runs / "empty"], tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_crax_plot_writes_the_figure(runs, tmp_path, capsys):
    from crax.cli import main

    main(["plot", str(runs / "lag"), str(runs / "ppo"), "--out", str(tmp_path / "c.svg")])
    assert (tmp_path / "c.svg").read_text().count("<svg") == 1
    assert capsys.readouterr().out.strip() == f"written: {tmp_path / 'c.svg'}"
