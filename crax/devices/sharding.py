"""Spreading a batch of envs over the available devices (XLA host devices on a CPU)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def batch_sharding(batch: int) -> NamedSharding | None:
    """A sharding of the leading axis over all devices, or None when it does not divide evenly."""
    devices = jax.devices()
    if len(devices) < 2 or batch % len(devices):
        return None
    return NamedSharding(Mesh(devices, ("envs",)), PartitionSpec("envs"))


def shard_batch(tree: Any, batch: int) -> Any:
    """Places every leaf whose leading axis is ``batch`` across devices; others are replicated."""
    sharding = batch_sharding(batch)
    if sharding is None:
        return tree
    replicated = NamedSharding(sharding.mesh, PartitionSpec())

    def put(x):
        if hasattr(x, "shape") and x.ndim and x.shape[0] == batch:
            return jax.device_put(x, sharding)
        return jax.device_put(x, replicated)

    return jax.tree.map(put, tree)


def per_device(fn: Callable, batch: int) -> tuple[Callable, int]:
    """Runs ``fn(batched_state, key, *rest) -> batched_state`` data-parallel over the devices.

    Returns the wrapped function and the per-device batch size that ``fn`` must be written for.
    Each device runs ``fn`` on its own slice of the batch with its own key (``key`` folded with
    the device index) and no communication, so per-step decisions such as "reset if any env is
    done" stay local to a device instead of synchronizing the cores at every step. Without
    several devices (or when ``batch`` does not divide evenly) ``fn`` is returned unchanged.
    """
    sharding = batch_sharding(batch)
    if sharding is None:
        return fn, batch

    def local(state, key, *rest):
        return fn(state, jax.random.fold_in(key, jax.lax.axis_index("envs")), *rest)

    spec = PartitionSpec("envs")
    wrapped = jax.shard_map(
        local, mesh=sharding.mesh, in_specs=(spec, PartitionSpec()), out_specs=spec, check_vma=False
    )
    return wrapped, batch // sharding.mesh.size
