"""Frame stacking (a learner config's ``frame_stack``): the last k images of each camera, stacked along
channels, so a policy on pixels sees motion (Mnih et al. 2015 stack four frames)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from crax.core import observation
from crax.core.env import Env, State, Wrapper


class FrameStack(Wrapper):
    """One unbatched env whose observation's every image entry ``(H, W, C)`` becomes the last ``k``
    frames stacked along channels, ``(H, W, k·C)``, the newest last; the state vector is the wrapped
    env's. A reset fills the stack with the first frame. The stack lives in the observation itself: a
    step hands the wrapped env its own observation (the newest frame) and pushes the frame it returns, so
    an auto-reset's fresh episode starts from its own filled stack.
    """

    def __init__(self, env: Env, k: int):
        super().__init__(env)
        if k < 1:
            raise ValueError(f"frame_stack must be >= 1, got {k}")
        spec = env.observation_spec
        shapes = observation.images(spec)
        if not shapes:
            raise ValueError(f"frame_stack={k} stacks images, but this env's observation has none "
                             f"({observation.state_size(spec)} state entries only): leave frame_stack at 1")
        self.k = int(k)
        self.channels = {key: int(s.shape[-1]) for key, s in shapes.items()}

    def _with_images(self, obs: Any, images: dict[str, jax.Array]) -> dict[str, jax.Array]:
        return {**obs, **images}

    def _filled(self, obs: Any) -> dict[str, jax.Array]:
        return self._with_images(obs, {key: jnp.concatenate([obs[key]] * self.k, axis=-1) for key in self.channels})

    def _newest(self, stacked: Any) -> dict[str, jax.Array]:
        return self._with_images(stacked, {key: stacked[key][..., -c:] for key, c in self.channels.items()})

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        return state.replace(obs=self._filled(state.obs))

    def step(self, state: State, action: jax.Array) -> State:
        stacked = state.obs
        state = self.env.step(state.replace(obs=self._newest(stacked)), action)
        pushed = {key: jnp.concatenate([stacked[key][..., c:], state.obs[key]], axis=-1)
                  for key, c in self.channels.items()}
        return state.replace(obs=self._with_images(state.obs, pushed))
