"""Sample efficiency of the off-policy family against PPO-Lag (issue 21), one sitting: the command line
of :mod:`crax.reports.sample_efficiency`, whose docstring says what it trains, measures and writes.

Usage::

    python benchmarks/sample_efficiency.py --env PointGoal1
    python benchmarks/sample_efficiency.py --env AntVelocity1 --steps sac-lag=1e6 td3-lag=1e6
"""

from pathlib import Path

from crax.reports.sample_efficiency import cli

if __name__ == "__main__":
    cli(Path(__file__).resolve().parent / "results")
