"""Sample efficiency of the off-policy family against PPO-Lag (issue 21): return and cost against env
steps and against training minutes on this machine, several seeds, one sitting.

Usage::

    python benchmarks/sample_efficiency.py --env PointGoal1
    python benchmarks/sample_efficiency.py --env AntVelocity1 --steps sac-lag=1e6 td3-lag=1e6

Each learner trains ``--num-seeds`` vmapped seeds for its step budget (``--total-steps``, or its own
``--steps LEARNER=STEPS``) at its defaults, except ``--set`` overrides (``FIELD=VALUE`` for every
learner with the field, ``LEARNER:FIELD=VALUE`` for one; by default PPO-Lag runs the quick start's
batch: 256 envs, 128 × 16 segments). Run folders are kept under
``benchmarks/results/runs/sample_efficiency/<env>-<learner>``: the same command again resumes an
interrupted learner and reuses a finished one, so a sitting can span sessions (each row records
when its learner finished and the load then, kept in the run folder's ``sitting.json``; a run folder
trained elsewhere has neither).

*Training minutes* sum the training calls' own time (from each iteration's
``perf/steps_per_second``): compiles and evaluations are left out, as a user's wall clock would not
leave them, but they do not depend on the learner's sample efficiency. *Reaching the reference*:
the first logged step at which the seeds' mean training-episode return, averaged over the last
``--window-steps`` env steps, reaches the reference learner's (PPO-Lag's) same average at its last
step while the same average of the episodic cost is at most the bound. Writes
``benchmarks/results/sample_efficiency_<env>.json`` and ``.png``; docs/learners.md's
``sample-efficiency-<ENV>`` table is generated from the JSON.
"""

from pathlib import Path

from crax.reports.sample_efficiency import cli

if __name__ == "__main__":
    cli(Path(__file__).resolve().parent / "results")
