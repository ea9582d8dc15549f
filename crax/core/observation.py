"""What an observation is: a flat float32 vector, or, for a task with a camera, a dict of that vector
and the images.

A task without an image sensor observes one array of shape ``(n,)`` float32. A task with one or more
image sensors (:class:`crax.sensors.camera.Camera`) observes a dict: :data:`STATE` holds the same
``(n,)`` float32 vector of every other sensor, and each image sensor's key (its ``key``, ``"camera"``
by default) a ``(height, width, channels)`` uint8 image. Batched, every leaf gains the same leading axes.
Wrappers, learners and the Gymnasium faces handle either through the functions here.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

STATE = "state"
"""The key of the flat state vector in a structured observation."""

Observation = jax.Array | dict[str, jax.Array]
"""One observation (or a batch): a flat array, or a dict of :data:`STATE` and images."""


def is_structured(obs: Any) -> bool:
    """Whether ``obs`` (an observation, a batch of them, or their shapes) is a dict of state and images."""
    return isinstance(obs, dict)


def state(obs: Any) -> Any:
    """The flat state vector of ``obs`` (the array itself for a flat observation)."""
    return obs[STATE] if is_structured(obs) else obs


def images(obs: Any) -> dict[str, Any]:
    """The image entries of ``obs`` by key (none for a flat observation)."""
    return {k: v for k, v in obs.items() if k != STATE} if is_structured(obs) else {}


def lead_shape(obs: Any) -> tuple[int, ...]:
    """The batch axes of ``obs``: its state vector's shape without the last axis."""
    return tuple(state(obs).shape[:-1])


def rows(obs: Any) -> int:
    """How many observations ``obs`` holds (the product of its batch axes)."""
    return math.prod(lead_shape(obs))


def state_size(spec: Any) -> int:
    """Size of the state vector of an observation with shapes ``spec``."""
    return int(state(spec).shape[-1])


def flat_size(spec: Any) -> int:
    """Size of a flat observation with shapes ``spec``; a ValueError for a structured one."""
    if is_structured(spec):
        shapes = ", ".join(f"{k} {tuple(v.shape)} {np.dtype(v.dtype).name}" for k, v in spec.items())
        raise ValueError(f"this env observes a dict ({shapes}), which has no single observation_size: read "
                         f"observation_spec (crax.core.observation)")
    return int(spec.shape[-1])


def check(spec: Any) -> None:
    """Raises a ValueError unless ``spec`` (one observation's shapes) follows this module's convention."""
    if not is_structured(spec):
        if len(spec.shape) != 1 or spec.dtype != jnp.float32:
            raise ValueError(f"a flat observation is one float32 vector; got {tuple(spec.shape)} {spec.dtype}")
        return
    if STATE not in spec:
        raise ValueError(f"a dict observation needs the key {STATE!r}; got {sorted(spec)}")
    check(spec[STATE])
    for key, image in images(spec).items():
        if len(image.shape) != 3 or image.dtype != jnp.uint8:
            raise ValueError(f"observation entry {key!r} must be a (height, width, channels) uint8 image; got "
                             f"{tuple(image.shape)} {image.dtype}")


def zeros(spec: Any, lead: tuple[int, ...] = ()) -> Any:
    """An observation of zeros with shapes ``spec``, with batch axes ``lead`` in front."""
    return jax.tree.map(lambda s: jnp.zeros((*lead, *s.shape), s.dtype), spec)
