"""A shield: an action filter that looks ahead in the env's own model and replaces actions that would
incur cost (issue 64).

crax's envs are pure functions, so a look-ahead is stepping copies of the state: the proposed action
and a fixed set of alternatives each run ``horizon`` env steps (``jax.vmap`` over the actions,
``lax.scan`` over the steps, inside the same jitted step), and the real step takes the action with the
least predicted cost. It filters any learner's actions (it wraps the env, not the policy), in training
and in evaluation alike: the shield is part of the deployed policy. ``--shield-horizon`` turns it on
for every learner (:class:`~crax.learners.shared.config.ConstraintConfig`).
"""

from __future__ import annotations

from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

from crax.core import physics as physics_impl
from crax.core.env import Env, State, Wrapper, under_episode_stats

Fallback = Literal["hold", "zero"]
"""What a look-ahead does after its first step: hold the same action, or apply the zero action."""

METRICS = ("shield/intervened", "shield/predicted_cost")
"""The metrics a shielded step adds (1 where the action was replaced; the proposed action's predicted cost)."""


def halton(n: int, dim: int) -> np.ndarray:
    """The first ``n`` points of the ``dim``-dimensional Halton sequence (bases: the first ``dim`` primes),
    from index 1 (index 0 is the origin), in ``[0, 1)^dim``: a deterministic low-discrepancy set."""
    primes: list[int] = []
    candidate = 2
    while len(primes) < dim:
        if all(candidate % p for p in primes):
            primes.append(candidate)
        candidate += 1
    points = np.zeros((n, dim))
    for d, base in enumerate(primes):
        for i in range(n):
            k, scale = i + 1, 1.0 / base
            while k:
                points[i, d] += (k % base) * scale
                k, scale = k // base, scale / base
    return points


class Shield(Wrapper):
    """Replaces an action whose look-ahead predicts cost with the best of ``candidates`` alternatives,
    for one unbatched env.

    On ``step(state, action)``, the look-ahead steps copies of ``state`` ``horizon`` times: the first
    step with the action, the following ones with the ``fallback`` (``"hold"``: the same action again;
    ``"zero"``: the zero action), summing the cost of the steps up to the first episode end. If the
    proposed action's predicted cost is > 0, the alternatives are (in this order, the first
    ``candidates`` of them):

    * the zero action;
    * the proposed action halved;
    * the proposed action reversed (its negative);
    * the Halton points (:func:`halton`) of ``[-1, 1]^action_size``, the same at every step.

    The step takes the action of least predicted cost among the proposed one and the alternatives; ties
    go to the one nearest the proposed action in L2, so an action is replaced only where an alternative
    predicts strictly less cost, and an action predicted free of cost is never replaced. The chosen
    action then takes the real step: the returned state is that step's alone (its reward, cost and done);
    the look-ahead's states are dropped. ``metrics["shield/intervened"]`` is 1 where the action was
    replaced and ``metrics["shield/predicted_cost"]`` the proposed action's predicted cost (the summed
    cost, ``state.cost``, whatever per-term budgets a learner keeps).

    Cost: ``(1 + candidates) × horizon`` extra env steps per step, all of them every step (the proposed
    action and the alternatives run in one vmap: under the vmap over envs a ``lax.cond`` would run both
    branches anyway); and one more copy of the env's step in the compiled program. Put it under
    :class:`~crax.core.env.EpisodeStats` (:func:`shield` does), so that episode statistics count the real
    steps only. Not on Warp's physics: its batch shares buffers sized for crax's named vmaps, and the
    look-ahead's vmap over candidates is not one of them.
    """

    def __init__(self, env: Env, horizon: int, candidates: int = 8, fallback: Fallback = "hold"):
        super().__init__(env)
        if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1:
            raise ValueError(f"Shield needs a look-ahead horizon of at least one env step (an integer), got "
                             f"{horizon!r}; horizon 0 means no shield: leave the env unwrapped")
        if isinstance(candidates, bool) or not isinstance(candidates, int | np.integer) or candidates < 1:
            raise ValueError(f"Shield needs at least one candidate action (an integer), got {candidates!r}")
        if fallback not in ("hold", "zero"):
            raise ValueError(f"Shield's fallback is 'hold' or 'zero', got {fallback!r}")
        if physics_impl.shares_buffers(env.unwrapped.physics):
            raise ValueError(f"Shield's look-ahead vmaps the env's step over candidate actions, which physics="
                             f"{env.unwrapped.physics!r} (a batch sharing buffers sized for crax's named vmaps) does not "
                             "allow: use physics='jax'")
        self.horizon = int(horizon)
        self.candidates = int(candidates)
        self.fallback: Fallback = fallback
        self._points = (2.0 * halton(max(self.candidates - 3, 0), env.action_size) - 1.0).astype(np.float32)

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        zero = jnp.zeros((), jnp.float32)
        return state.replace(metrics={**state.metrics, **{k: zero for k in METRICS}})

    def alternatives(self, action: jax.Array) -> jax.Array:
        """The ``candidates`` alternatives to ``action``, shape ``(candidates, action_size)``."""
        a = action.astype(jnp.float32)
        return jnp.concatenate([jnp.stack([jnp.zeros_like(a), 0.5 * a, -a]), self._points])[: self.candidates]

    def predicted_cost(self, state: State, action: jax.Array) -> jax.Array:
        """The summed cost of ``horizon`` steps from ``state``: ``action`` first, then the fallback, up to the
        first episode end."""
        follow = action if self.fallback == "hold" else jnp.zeros_like(action)
        actions = jnp.where((jnp.arange(self.horizon) == 0)[:, None], action, follow)

        def step(carry, a):
            s, open_ = carry
            out = self.env.step(s, a)
            # the carry keeps the given metrics: a step returns its own, without those of the wrappers above
            return (out.replace(metrics=s.metrics), open_ * (1.0 - out.done)), open_ * out.cost

        _, costs = jax.lax.scan(step, (state, jnp.ones((), jnp.float32)), actions)
        return costs.sum()

    def step(self, state: State, action: jax.Array) -> State:
        action = jnp.asarray(action, jnp.float32)
        actions = jnp.concatenate([action[None], self.alternatives(action)])  # the proposed action first
        predicted = jax.vmap(self.predicted_cost, in_axes=(None, 0))(state, actions)
        distance = jnp.linalg.norm(actions - action, axis=-1)
        best = jnp.argmin(jnp.where(predicted == predicted.min(), distance, jnp.inf))
        intervened = best != 0
        state = self.env.step(state, jnp.where(intervened, actions[best], action))
        return state.replace(metrics={**state.metrics, "shield/intervened": intervened.astype(jnp.float32),
                                      "shield/predicted_cost": predicted[0].astype(jnp.float32)})


def shield(env: Env, horizon: int, candidates: int = 8, fallback: Fallback = "hold") -> Env:
    """``env`` (what a learner's ``wrap_env`` receives: ``EpisodeStats`` over the task) with :class:`Shield`
    put under its :class:`EpisodeStats`, so that the episode statistics count the real steps only."""
    return under_episode_stats(env, lambda inner: Shield(inner, horizon, candidates, fallback))
