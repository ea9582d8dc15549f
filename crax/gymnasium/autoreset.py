"""The two autoreset timings of :class:`crax.gymnasium.CraxVectorEnv`, as crax wrappers of a batched env.

Gymnasium names them ``AutoresetMode.SAME_STEP`` (crax's own :class:`crax.core.env.AutoReset`: a
finished env is reset on the step it finished) and ``AutoresetMode.NEXT_STEP`` (Gymnasium's
default, :class:`NextStepAutoReset`: the finishing step returns the episode's last observation,
and the env is reset on the next call, whose action it ignores).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from gymnasium.vector import AutoresetMode

from crax.core.batch import select
from crax.core.env import AutoReset, Env, State, Vmap, Wrapper

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
"""The autoreset modes the vector env offers; the first is the default."""

_PENDING = "autoreset_pending"
"""``state.info`` entry: the envs whose episode ended on the last step and that reset on the next."""


def check_autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    """``mode`` as an :class:`AutoresetMode` (also from its value, e.g. ``"NextStep"``, or its name,
    ``"next_step"``); ValueError naming the modes offered otherwise."""
    for choice in AUTORESET_MODES:
        if mode == choice or (isinstance(mode, str) and mode.lower() in (choice.value.lower(), choice.name.lower())):
            return choice
    offered = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AUTORESET_MODES)
    raise ValueError(f"autoreset_mode must be one of {offered}; got {mode!r}")


def batched_stack(env: Env, num_envs: int, mode: AutoresetMode) -> Env:
    """``num_envs`` copies of the unbatched ``env`` that reset with ``mode``'s timing."""
    vmapped = Vmap(env, num_envs)
    return AutoReset(vmapped) if mode is AutoresetMode.SAME_STEP else NextStepAutoReset(vmapped)


class _HoldFinished(Wrapper):
    """Between :class:`AutoReset` and the batched env: an env whose episode ends is reported not
    done (so AutoReset keeps its last state), and on the next step it is not stepped but reported
    done (so AutoReset swaps its next episode in then). ``info["autoreset_pending"]`` marks the
    envs that finished on the last step; a freshly reset env has it False."""

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        return state.replace(info={**state.info, _PENDING: jnp.zeros(state.done.shape, bool)})

    def step(self, state: State, action: jax.Array) -> State:
        held = state.info[_PENDING]
        stepped = self.env.step(state, action)
        finished = stepped.done > 0
        stepped = stepped.replace(done=jnp.zeros_like(stepped.done), info={**stepped.info, _PENDING: finished})
        return select(held, state.replace(done=jnp.ones_like(state.done)), stepped)


class NextStepAutoReset(Wrapper):
    """Gymnasium's next-step autoreset of a batched env (:class:`crax.core.env.Vmap`).

    On the step where env ``i``'s episode ends, its state is the episode's last one, and ``done``,
    ``truncation``, ``reward``, ``cost`` and ``metrics`` are that step's. On the next step env
    ``i`` is not stepped (its action is ignored): it starts its next episode, with ``reward``,
    ``cost``, ``done``, ``truncation`` and every metric 0. The next episode is the one
    :class:`crax.core.env.AutoReset` would have started (same per-env keys and layouts), one call later.
    """

    def __init__(self, env: Env, refill_at: int | None = None):
        super().__init__(AutoReset(_HoldFinished(env), refill_at))

    def step(self, state: State, action: jax.Array) -> State:
        held = state.info[_PENDING]
        s = self.env.step(state, action)

        def zero(x: jax.Array) -> jax.Array:
            return jnp.where(held.reshape(held.shape + (1,) * (x.ndim - 1)), jnp.zeros_like(x), x)

        return s.replace(done=s.info[_PENDING].astype(s.done.dtype), reward=zero(s.reward), cost=zero(s.cost),
                         truncation=zero(s.truncation), metrics=jax.tree.map(zero, s.metrics))
