"""Constrained PPO learners (being written: see docs/STATUS.md)."""

BUILTIN_LEARNERS: tuple[type, ...] = ()
