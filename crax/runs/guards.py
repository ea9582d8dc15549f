"""How a run stops or refuses to start: the run's exceptions, SIGTERM handling, seed and memory checks."""

from __future__ import annotations

import math
import signal
import threading

import jax

from crax.devices.distributed import Device
from crax.learners.shared.trainer import BaseTrainer, default_devices


class RunComplete(ValueError):
    """Resuming a run that already trained its ``total_steps``."""


class TrainingDiverged(RuntimeError):
    """A loss or parameter became non-finite; the run folder keeps its last good checkpoint."""


class StorageFailed(RuntimeError):
    """A checkpoint or the metrics could not be written (a full disk); the message says how to resume."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (what SLURM, Kubernetes and most schedulers send before killing a job), raised where
    Ctrl-C's KeyboardInterrupt would be, so a terminated run is checkpointed the same way."""


class StopOnSigterm:
    """While installed, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: a no-op)."""

    def __init__(self):
        self._previous = None

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._raise)

    @staticmethod
    def _raise(signum, frame) -> None:
        raise Terminated()

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None


def check_seed(seed: int, name: str = "config field 'seed'") -> None:
    """ValueError unless ``seed`` fits the 64-bit integer a JAX PRNG key is made from."""
    if not -(2**63) <= seed < 2**63:
        raise ValueError(f"{name} must be a 64-bit integer, in [-2**63, 2**63 - 1]; got {seed}")


def _memory_available(device: Device) -> int | None:
    """Bytes a run can use on ``device``: an accelerator's allocator limit, or the host's available
    memory for a CPU device (None where neither is known)."""
    if device.platform == "cpu":
        try:
            with open("/proc/meminfo", encoding="ascii") as f:
                info = dict(line.split(":", 1) for line in f)
            return int(info["MemAvailable"].split()[0]) * 1024
        except (OSError, KeyError, ValueError):
            return None
    stats = device.memory_stats() or {}
    return stats.get("bytes_limit")


def memory_estimate(trainer: BaseTrainer) -> int:
    """A lower bound on the bytes one training call holds: the whole train state (learners, optimizers,
    env states of every env and seed) plus the rollout's observations, actions, log-probabilities,
    rewards, costs, values and flags of one iteration (float32; an observation's images as the env gives
    them, uint8)."""
    c = trainer.config
    state = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(trainer.abstract_state()))
    obs = sum(math.prod(x.shape) * x.dtype.itemsize for x in jax.tree.leaves(trainer.observation_spec))
    per_step = 2 * obs + 4 * (3 * trainer.action_size + 8)
    return int(state + per_step * c.steps_per_iteration * c.num_seeds)


def check_memory(trainer: BaseTrainer) -> None:
    """ValueError when :func:`memory_estimate` exceeds the memory of the devices the run uses, instead of
    an allocation that fails (or swaps until a time limit) after minutes of compiling."""
    devices = default_devices(trainer.config.num_devices, trainer.env.unwrapped.physics)
    local = [d for d in devices if d.process_index == jax.process_index()]
    limits = [_memory_available(d) for d in local]
    known = [b for b in limits if b is not None]
    if not known or len(known) < len(limits):
        return
    have = known[0] if local[0].platform == "cpu" else sum(known)  # CPU devices share the host's memory
    need = memory_estimate(trainer) * len(local) // len(devices)  # this process's share
    if need > have:
        c = trainer.config
        buffer = getattr(c, "buffer_size", None)
        held = f"a replay buffer of {buffer:,} transitions, " if buffer else ""
        fix = ("lower --buffer-size, --num-envs or --num-seeds" if buffer else
               "lower --num-envs (with --batch-size × --num-minibatches a multiple of it) or --num-seeds")
        raise ValueError(
            f"this run needs at least {need / 2**30:,.1f} GiB (the train state of {c.num_seeds} seed(s) × "
            f"{c.num_envs:,} envs, {held}and one iteration's rollout of {c.steps_per_iteration:,} steps per seed), "
            f"more than the {have / 2**30:,.1f} GiB available on {local[0].platform} ({len(local)} device(s)); {fix}")
