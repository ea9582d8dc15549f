"""The toy env observed through a tiny camera: a dict observation (crax.core.observation) for the learners'
pixel tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from crax.core.env import State
from tests.learners.toy_env import ToyEnv


class PixelToyEnv(ToyEnv):
    """:class:`ToyEnv` whose observation is ``{"state": (1,) float32, "camera": (size, size, channels)
    uint8}``: the state vector holds only the episode's elapsed fraction, the image a bright blob at the
    point (a Gaussian of 0.15 over the torus ``[-1, 1)²``, rows along y, columns along x), so a policy
    that acts on the position has to read it from the pixels."""

    def __init__(self, episode_length: int = 16, size: int = 16, channels: int = 1):
        super().__init__(episode_length=episode_length)
        self.size = size
        self.channels = channels

    def render(self, pos: jax.Array) -> jax.Array:
        """The camera image of the point at ``pos``, ``(size, size, channels)`` uint8."""
        centres = -1.0 + (jnp.arange(self.size) + 0.5) * 2.0 / self.size
        dx, dy = centres[None, :] - pos[0], centres[:, None] - pos[1]
        blob = jnp.exp(-(dx**2 + dy**2) / (2 * 0.15**2))
        image = jnp.round(255.0 * blob).astype(jnp.uint8)
        return jnp.repeat(image[..., None], self.channels, axis=-1)

    def _observed(self, state: State) -> State:
        elapsed = state.info["steps"] / self.episode_length
        return state.replace(obs={"state": jnp.reshape(elapsed, (1,)).astype(jnp.float32),
                                  "camera": self.render(state.data["pos"])})  # pyright: ignore[reportIndexIssue]

    def reset(self, key: jax.Array) -> State:
        return self._observed(super().reset(key))

    def step(self, state: State, action: jax.Array) -> State:
        return self._observed(super().step(state, action))
