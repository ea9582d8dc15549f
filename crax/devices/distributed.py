"""Training over several hosts: ``jax.distributed`` set-up and the host-side steps every process takes.

With ``jax.distributed.initialize`` every process runs the same program and ``jax.devices()`` lists
the devices of all of them; a trainer lays its state out over that global list, so learner code
does not change. What happens on the host needs care: reading a global array gathers it from
every process (a collective, so every process must take part), and files are written by process
0 alone. Processes share the run folder (a shared filesystem), so a resumed run reads the same
checkpoint everywhere.

With a single process every function here reduces to its plain single-host form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils

if TYPE_CHECKING:
    # jax.Device is bound at runtime to jaxlib's compiled device class, which ships no stub, so a
    # type checker reads it as a variable and refuses it in annotations; annotate with this instead
    Device: TypeAlias = Any
else:
    Device = jax.Device


def initialize(coordinator_address: str, num_processes: int | None = None, process_id: int | None = None) -> None:
    """Joins this process to a multi-process run (before anything touches a JAX device).

    ``num_processes`` and ``process_id`` may be left out where JAX detects them (SLURM, Open MPI,
    Kubernetes and cloud TPU environments). Raises ValueError for inconsistent arguments.
    """
    if num_processes is not None and num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if process_id is not None and num_processes is not None and not 0 <= process_id < num_processes:
        raise ValueError(f"process_id must be in [0, {num_processes}), got {process_id}")
    if ":" not in coordinator_address:
        raise ValueError(f"coordinator_address must be HOST:PORT, got {coordinator_address!r}")
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id)
    except RuntimeError as e:
        raise ValueError(f"jax.distributed.initialize failed ({e}); call it before any JAX computation, "
                         "once per process") from None


def multiprocess() -> bool:
    """Whether this run spans several processes."""
    return jax.process_count() > 1


def is_main() -> bool:
    """Whether this process writes files and prints (process 0)."""
    return jax.process_index() == 0


def is_key(x: Any) -> bool:
    """Whether ``x`` is an array of typed PRNG keys."""
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def to_host(tree: Any) -> Any:
    """``tree`` as host values; with several processes each global array is gathered whole on every
    process (a collective: every process must call it at the same point). PRNG keys stay keys."""
    if not multiprocess():
        return jax.device_get(tree)

    def gather(x):
        if not isinstance(x, jax.Array):
            return x
        if is_key(x):
            # jax annotates key_bits_array as an Array; it takes a NumPy array as well
            return jax.random.wrap_key_data(np.asarray(multihost_utils.process_allgather(  # pyright: ignore[reportArgumentType]
                jax.random.key_data(x), tiled=True)))
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))

    return jax.tree.map(gather, tree)


def agree(value: str) -> str:
    """Process 0's ``value`` on every process (e.g. a timestamped run folder name)."""
    if not multiprocess():
        return value
    data = np.frombuffer(value.encode(), np.uint8)
    size = int(multihost_utils.broadcast_one_to_all(np.int32(data.size)))
    buf = np.zeros(size, np.uint8)
    buf[: min(size, data.size)] = data[:size]
    return bytes(np.asarray(multihost_utils.broadcast_one_to_all(buf))).decode()


def barrier(name: str) -> None:
    """Waits until every process reaches the barrier of this name (no-op with one process)."""
    if multiprocess():
        multihost_utils.sync_global_devices(name)


def global_devices(local: list[Device]) -> list[Device]:
    """The devices at the same local positions as ``local`` on every process (``local`` itself with one)."""
    if not multiprocess():
        return local
    mine = jax.local_devices()
    positions = [mine.index(d) for d in local]
    by_process: dict[int, list[Device]] = {}
    for d in jax.devices():
        by_process.setdefault(d.process_index, []).append(d)
    return [devices[i] for _, devices in sorted(by_process.items()) for i in positions]


def put(tree: Any, shardings: Any) -> Any:
    """Host values (every process holding the same whole values, e.g. from one checkpoint file) laid
    out as global arrays with ``shardings`` (a matching tree), each process filling its own shards;
    leaves that are global arrays already are resharded."""
    if not multiprocess():
        return jax.device_put(tree, shardings)

    def one(x, sharding):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:  # already global: reshard on devices
            return jax.device_put(x, sharding)
        if is_key(x):
            data = one(np.asarray(jax.random.key_data(x)), sharding)
            return jax.jit(jax.random.wrap_key_data, out_shardings=sharding)(data)
        x = np.asarray(x)
        return jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])

    return jax.tree.map(one, tree, shardings)
