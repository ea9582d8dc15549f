"""A replay buffer in device memory: a ring of transitions written and sampled inside the jitted iteration.
A transition's fields may be nested (an observation's dict of state vector and images) and keep their
dtypes: images are stored as the env gives them, uint8, never as float copies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class ReplayBuffer:
    """``capacity`` transitions per field (leading axis of every leaf), the next write slot and how many are filled.

    Writes wrap around at capacity, overwriting the oldest transitions; sampling draws uniformly from
    the filled slots only. A pytree, so it lives in the train state and its checkpoint.
    """

    data: dict[str, Any]
    position: jax.Array
    size: jax.Array

    if TYPE_CHECKING:
        def replace(self, **updates: Any) -> Self: ...

    @property
    def capacity(self) -> int:
        return jax.tree.leaves(self.data)[0].shape[0]

    @classmethod
    def empty(cls, example: dict[str, Any], capacity: int) -> ReplayBuffer:
        """An empty buffer of ``capacity`` transitions shaped and typed like one ``example`` transition."""
        data = jax.tree.map(lambda v: jnp.zeros((capacity, *jnp.shape(v)), jnp.asarray(v).dtype), example)
        zero = jnp.zeros((), jnp.int32)
        return cls(data=data, position=zero, size=zero)

    def insert(self, batch: dict[str, Any]) -> ReplayBuffer:
        """The buffer with ``batch`` (leading axis: transitions, at most ``capacity``) written at the
        next slots, wrapping around."""
        n = jax.tree.leaves(batch)[0].shape[0]
        capacity = self.capacity
        if n > capacity:
            raise ValueError(f"cannot insert {n} transitions into a replay buffer of {capacity}")
        index = (self.position + jnp.arange(n)) % capacity
        data = {k: jax.tree.map(lambda d, b: d.at[index].set(b.astype(d.dtype)), self.data[k], batch[k]) for k in self.data}
        return self.replace(data=data, position=(self.position + n) % capacity, size=self.size_after(n))

    def size_after(self, n: int) -> jax.Array:
        """How many slots are filled once ``n`` more transitions are inserted."""
        return jnp.minimum(self.size + n, self.capacity)

    def sample(self, key: jax.Array, n: int) -> dict[str, Any]:
        """``n`` transitions drawn uniformly, with replacement, from the filled slots."""
        index = jax.random.randint(key, (n,), 0, jnp.maximum(self.size, 1))
        return jax.tree.map(lambda v: v[index], self.data)
