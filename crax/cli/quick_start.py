"""The quick start's CPU batch, declared once: the batch layout the README's first command trains PPO-Lag
with on a CPU (and the trust-region sweep of the README and docs/learners.md, the sample-efficiency
benchmark's PPO-Lag), smaller than the learners' GPU-sized defaults (2048 envs, 32 minibatches).

tests/test_cli.py checks that the README's commands say these flags and that they make a valid config.
"""

from __future__ import annotations

QUICK_START_BATCH: dict[str, int] = {"num_envs": 256, "batch_size": 128, "num_minibatches": 16}
"""Config fields of the CPU quick start's batch: 256 envs, 128 × 16 trajectory segments an iteration."""

QUICK_START_STEPS = 2_000_000
"""Environment steps per seed the quick start trains for (``--total-steps 2e6``)."""

QUICK_START_LEARNER = "ppo-lag"
QUICK_START_ENV = "PointGoal1"


def batch_flags(batch: dict[str, int] = QUICK_START_BATCH) -> str:
    """The batch as ``crax train``/``crax sweep`` flags: ``--num-envs 256 --batch-size 128 --num-minibatches 16``."""
    return " ".join(f"--{name.replace('_', '-')} {value}" for name, value in batch.items())


def batch_sets(learner: str = QUICK_START_LEARNER, batch: dict[str, int] = QUICK_START_BATCH) -> tuple[str, ...]:
    """The batch as ``LEARNER:FIELD=VALUE`` assignments (``benchmarks/sample_efficiency.py --set``)."""
    return tuple(f"{learner}:{name}={value}" for name, value in batch.items())


def train_command(learner: str = QUICK_START_LEARNER, env: str = QUICK_START_ENV) -> str:
    """The quick start's ``crax train`` command (the README's first command ends with it)."""
    steps = f"{QUICK_START_STEPS:.0e}".replace("e+0", "e")  # 2e6
    return f"crax train {learner} --env {env} --total-steps {steps} {batch_flags()}"


__all__ = ["QUICK_START_BATCH", "QUICK_START_ENV", "QUICK_START_LEARNER", "QUICK_START_STEPS", "batch_flags",
           "batch_sets", "train_command"]
