"""Spreading a batch of envs over the available devices (XLA host devices on a CPU)."""

from __future__ import annotations

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
