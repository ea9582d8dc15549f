"""The environment interface: the `State` pytree, the `Env` base and its wrappers.

Every env is functional: `reset(key) -> State` and `step(state, action) -> State` are pure and
traceable, so they compose with `jax.jit`, `jax.vmap` and `jax.lax.scan`. The usual training
stack is built by :func:`wrap_for_training`::

    AutoReset(Vmap(EpisodeStats(PackedState(env)), num_envs))

`PackedState` carries each env's physics as its physics model's state (``state.data`` a
:class:`~crax.core.physics_model.PackedData`), `EpisodeStats` accumulates per-env episodic
return/cost/length, `Vmap` batches, and `AutoReset` swaps finished envs for freshly reset ones (a
new layout each episode) while keeping the true final observation in ``info["final_obs"]``.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

import jax
import jax.numpy as jnp
from flax import struct

from crax.core import observation
from crax.core.batch import ENV_AXIS, select
from crax.core.mjx import mjx
from crax.core.physics_model import STATE_FIELDS, PackedData, PhysicsModel


@struct.dataclass
class State:
    """One step of an environment (a pytree; replace, never mutate).

    Attributes:
      data: MJX physics state: the scene's ``mjx.Data``; in a training stack (under
        :class:`PackedState`) a :class:`~crax.core.physics_model.PackedData`.
      obs: observation: an array of shape ``(observation_size,)`` (batched: ``(N, observation_size)``), or
        for a task with a camera a dict of the state vector and the images (:mod:`crax.core.observation`).
      reward: float32 reward of the last step.
      cost: float32 constraint cost of the last step (sum of the ``metrics["cost/*"]`` terms).
      done: 1.0 where the episode ended (termination or truncation) at this step.
      truncation: 1.0 where it ended only because of the time limit (bootstrap from the value).
      info: task state (goal and hazard positions, step count, rng, wrapper state).
      metrics: every reward and cost term by name, ``reward/<term>`` and ``cost/<term>``, and
        ``env/nonfinite_action`` and ``env/nonfinite_state`` (1.0 on a step whose action had a
        NaN or inf entry, which was replaced by 0, or whose physics state became non-finite,
        which ended the episode; see :class:`crax.suites.task_env.TaskEnv`).
    """

    data: mjx.Data | PackedData
    obs: jax.Array | dict[str, jax.Array]
    reward: jax.Array
    cost: jax.Array
    done: jax.Array
    truncation: jax.Array
    info: dict[str, Any]
    metrics: dict[str, jax.Array]

    if TYPE_CHECKING:  # flax.struct.dataclass adds replace() at runtime; pyright cannot see it
        def replace(self, **updates: Any) -> Self: ...


class Env(abc.ABC):
    """Abstract functional environment with a reward and a cost channel.

    An env that counts its steps in ``state.info["steps"]`` and truncates when the count reaches
    ``episode_length`` can be started part-way through an episode by the trainer (desynchronised
    episodes); crax's task envs do.
    """

    physics: str = "jax"
    """The MJX implementation that steps the physics (:mod:`crax.core.physics`): ``"jax"``, or
    ``"warp"`` for a :class:`~crax.suites.task_env.TaskEnv` built with ``physics="warp"``. Read it on
    ``env.unwrapped``."""

    @abc.abstractmethod
    def reset(self, key: jax.Array) -> State:
        """Draws a fresh episode (layout, start pose) from ``key``."""

    @abc.abstractmethod
    def step(self, state: State, action: jax.Array) -> State:
        """Advances one control step with ``action`` in ``[-1, 1]^action_size``."""

    @property
    @abc.abstractmethod
    def action_size(self) -> int: ...

    @property
    def action_shape(self) -> tuple[int, ...]:
        """The shape of one env's action: ``(action_size,)``; ``(agents, action_size)`` for a
        :class:`~crax.core.multi_agent.MultiAgentEnv`."""
        return (self.action_size,)

    @property
    @abc.abstractmethod
    def episode_length(self) -> int: ...

    @property
    @abc.abstractmethod
    def dt(self) -> float: ...

    @functools.cached_property
    def state_shapes(self) -> State:
        """Shapes and dtypes of a reset state (``reset`` traced once, nothing compiled; tracing an MJX
        step takes seconds, so sizes and metric names are read from here)."""
        return jax.eval_shape(self.reset, jax.random.key(0))

    @property
    def observation_spec(self) -> Any:
        """Shapes and dtypes of one observation (:data:`crax.core.observation.Observation`): a
        ``jax.ShapeDtypeStruct`` for a flat observation, a dict of them for a task with a camera."""
        return self.state_shapes.obs

    @property
    def observation_size(self) -> int:
        """Size of a flat observation; a ValueError for a structured one (read :attr:`observation_spec`)."""
        return observation.flat_size(self.state_shapes.obs)

    @property
    def unwrapped(self) -> Env:
        return self


class Wrapper(Env):
    """Delegates everything to the wrapped env; subclasses override what they change."""

    def __init__(self, env: Env):
        self.env = env

    def reset(self, key: jax.Array) -> State:
        return self.env.reset(key)

    def step(self, state: State, action: jax.Array) -> State:
        return self.env.step(state, action)

    @property
    def action_size(self) -> int:
        return self.env.action_size

    @property
    def action_shape(self) -> tuple[int, ...]:
        # the wrapped env's, its last axis this wrapper's action_size (which a wrapper may change)
        return (*self.env.action_shape[:-1], self.action_size)

    @property
    def episode_length(self) -> int:
        return self.env.episode_length

    @property
    def dt(self) -> float:
        return self.env.dt

    @property
    def unwrapped(self) -> Env:
        return self.env.unwrapped

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not yet set: avoid infinite recursion during unpickling
            raise AttributeError(name)
        return getattr(self.env, name)


class EpisodeStats(Wrapper):
    """Tracks episodic return, cost and length of a single (unbatched) env, and each term's sum.

    At the step where an episode ends, ``metrics["episode/return"]``, ``["episode/cost"]`` and
    ``["episode/length"]`` hold the finished episode's totals, ``["episode/cost_peak"]`` its largest step
    cost (what a state-wise bound constrains), ``metrics["episode/<term>"]`` the
    episode sum of every ``reward/<term>`` and ``cost/<term>`` metric (``episode/cost/contact``),
    and ``metrics["episode/done"]`` is 1; elsewhere they are 0. Average with
    ``sum(x * done) / sum(done)``. An episode flagged ``info["episode"]["partial"]`` (one that
    started part-way, see :func:`crax.learners.on_policy.trainer.desynchronize`) ends without being reported.
    """

    _KEYS = ("return", "cost", "length", "cost_peak")

    @staticmethod
    def _terms(metrics: dict[str, jax.Array]) -> dict[str, jax.Array]:
        return {k: v for k, v in metrics.items() if k.startswith(("reward/", "cost/")) and jnp.ndim(v) == 0}

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        zero = jnp.zeros((), jnp.float32)
        terms = {k: zero for k in self._terms(state.metrics)}
        # a multi-agent env's return and cost are per agent (crax.core.multi_agent)
        totals = {"return": jnp.zeros_like(state.reward), "cost": jnp.zeros_like(state.cost), "length": zero,
                  "cost_peak": jnp.zeros_like(state.cost)}
        info = {**state.info, "episode": {**totals, "partial": zero, "terms": terms}}
        metrics = {**state.metrics, **{f"episode/{k}": v for k, v in totals.items()},
                   **{f"episode/{k}": zero for k in ("done", *terms)}}
        return state.replace(info=info, metrics=metrics)

    def step(self, state: State, action: jax.Array) -> State:
        acc = state.info["episode"]
        state = self.env.step(state, action)
        total = {
            "return": acc["return"] + state.reward,
            "cost": acc["cost"] + state.cost,
            "length": acc["length"] + 1.0,
            "cost_peak": jnp.maximum(acc["cost_peak"], state.cost),
            "partial": acc["partial"],
        }
        step_terms = self._terms(state.metrics)
        terms = {k: acc["terms"][k] + step_terms[k].astype(jnp.float32) for k in acc["terms"]}
        done = state.done
        reported = done * (1.0 - acc["partial"])
        metrics = {**state.metrics, "episode/done": reported}
        metrics.update({f"episode/{k}": total[k] * reported for k in self._KEYS})
        metrics.update({f"episode/{k}": v * reported for k, v in terms.items()})
        info = {**state.info, "episode": {**{k: v * (1.0 - done) for k, v in total.items()},
                                          "terms": {k: v * (1.0 - done) for k, v in terms.items()}}}
        return state.replace(info=info, metrics=metrics)


class PackedState(Wrapper):
    """Carries an unbatched env's physics state as a :class:`~crax.core.physics_model.PackedData`: of the physics
    model's ``Data``, MuJoCo's state (:data:`~crax.core.physics_model.STATE_FIELDS`) and the fields the env's
    step reads of the state it is given (``env.step_reads``), and the inert bodies' mocap poses
    (docs/DECISIONS.md, decisions 73 and 74).

    The wrapped env resets and steps the scene's ``Data`` as ever; this wrapper packs what it returns
    and unpacks (:meth:`~crax.core.physics_model.PhysicsModel.unpack`) what it is given, inside the same
    traced step, where XLA keeps of the scene's ``Data`` only what the step reads and computes the
    fields left out again. Batched, auto-reset's select, its pool and the rollout's carry then move
    17 arrays an env instead of ~90 (PointGoal1). Everything but ``state.data`` is the wrapped env's.
    Read the scene's ``Data`` of a packed state with
    ``env.unwrapped.physics_model.unpack(state.data, forward=True)`` (one env's; vmap it for a batch).
    An env without a ``physics_model`` is passed through unchanged; one without ``step_reads``, or on
    Warp's physics, carries its physics model's whole ``Data``, as every env does with ``whole``
    (the first packed stack's layout, kept to compare against: ``benchmarks/packed_fields.py``).
    """

    def __init__(self, env: Env, whole: bool = False):
        super().__init__(env)
        model = getattr(env.unwrapped, "physics_model", None)
        self.model: PhysicsModel | None = model if isinstance(model, PhysicsModel) else None
        reads = getattr(env.unwrapped, "step_reads", None)
        self.fields: frozenset[str] | None = (STATE_FIELDS | reads if not whole and self.model is not None
                                               and self.model.is_jax and isinstance(reads, frozenset) else None)

    def _packed(self, state: State) -> State:
        assert self.model is not None
        if isinstance(state.data, PackedData):
            raise TypeError("the wrapped env returned a PackedData already: wrap an env in PackedState once")
        return state.replace(data=self.model.pack(state.data, self.fields))

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        return state if self.model is None else self._packed(state)

    def step(self, state: State, action: jax.Array) -> State:
        if self.model is None:
            return self.env.step(state, action)
        if not isinstance(state.data, PackedData):
            raise TypeError(f"PackedState.step takes a state whose data is a PackedData (from its reset), got "
                            f"{type(state.data).__name__}")
        return self._packed(self.env.step(state.replace(data=self.model.unpack(state.data)), action))


def key_batch_size(key: jax.Array) -> int | None:
    """The number of keys in a 1-D batch of PRNG keys (typed ``jax.random.key`` or raw ``PRNGKey``
    data), or None for a single key."""
    raw = not jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    return None if key.ndim == int(raw) else int(key.shape[0])


class Vmap(Wrapper):
    """Runs ``num_envs`` copies of an env in parallel with ``jax.vmap``.

    ``reset`` takes one key (split into ``num_envs``) or a batch of ``num_envs`` keys.

    Its vmap is named :data:`crax.core.batch.ENV_AXIS`, and a vmap of this batch must be named
    :data:`~crax.core.batch.BATCH_AXIS` (the learners' seeds): a physics whose batch shares buffers
    sizes them for, and finds each env in them by, those named axes (:func:`crax.core.batch.world_index`).
    """

    def __init__(self, env: Env, num_envs: int):
        super().__init__(env)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = int(num_envs)

    def reset(self, key: jax.Array) -> State:
        batch = key_batch_size(key)
        if batch is not None and batch != self.num_envs:
            raise ValueError(f"reset got a batch of {batch} keys for {self.num_envs} envs (num_envs); pass one "
                             f"key or {self.num_envs}")
        keys = key if batch is not None else jax.random.split(key, self.num_envs)
        return jax.vmap(self.env.reset, axis_name=ENV_AXIS)(keys)

    def step(self, state: State, action: jax.Array) -> State:
        expected = (self.num_envs, *self.env.action_shape)
        if tuple(action.shape) != expected:
            what = "(num_envs, agents, action_size)" if len(expected) == 3 else "(num_envs, action_size)"
            raise ValueError(f"action has shape {tuple(action.shape)}; expected {expected} {what}")
        return jax.vmap(self.env.step, axis_name=ENV_AXIS)(state, action)


class AutoReset(Wrapper):
    """Resets finished envs of a batched env with a fresh layout drawn from a new key.

    Wraps a batched env (:class:`Vmap`). ``reward``, ``cost``, ``done``, ``truncation`` and
    ``metrics`` of the finishing step are kept; physics, observation and task state are those of
    the new episode. ``info["final_obs"]`` always holds the observation the step produced, before
    any reset, for bootstrapping truncated episodes.

    Env ``i``'s next episode always starts from ``env.reset(split(key_i)[1])``, ``key_i`` being
    ``info["autoreset_key"][i]``, which then advances to ``split(key_i)[0]``. That start state (and
    the advanced key) is prepared ahead in a pool (``info["autoreset_pool"]``, one slot per env): a
    finishing env swaps its slot in with a select, and no key is split on the other steps. Used
    slots are refilled together, in one batched reset, once ``refill_at`` of them are used or when
    an env finishes whose slot is used. The trajectories are those of resetting each env at its
    finishing step, whatever ``refill_at`` is; only the cost moves: the reset fills the whole pool
    (one reset program for the batch and the pool), and a reset costs nearly the same
    for 8 envs as for 64 on CPU (many small kernels), so one batched refill every few steps is
    cheaper than resetting a few envs on every step, which bodies that fall often (a Humanoid under
    a random policy, 2–3 of 64 envs per step) would pay.

    Args:
      env: a batched env, e.g. :class:`Vmap`.
      refill_at: used slots that trigger a refill; default half the batch.
    """

    def __init__(self, env: Env, refill_at: int | None = None):
        super().__init__(env)
        if refill_at is not None and refill_at < 1:
            raise ValueError(f"refill_at must be >= 1, got {refill_at}")
        self.refill_at = refill_at

    @staticmethod
    def _pack(state: State, keys: Any) -> dict:
        """The parts of a freshly reset state that a finishing env takes over."""
        return {"data": state.data, "obs": state.obs, "info": {k: state.info[k] for k in keys}}

    def reset(self, key: jax.Array) -> State:
        n = key_batch_size(key)
        if n is None:
            n = getattr(self.env, "num_envs", None) or int(jax.eval_shape(self.env.reset, key).done.shape[0])
            key, sub = jax.random.split(key)
            keys = jax.random.split(sub, n)  # what Vmap.reset(sub) gives each env
            auto_keys = jax.random.split(key, n)
        else:  # one key per env, as Vmap takes them: env i starts from reset(key[i])
            keys = key
            auto_keys = jax.vmap(lambda k: jax.random.fold_in(k, 1))(key)
        # The pool starts full: every slot holds its env's next start, as a refill of all would make it.
        split = jax.vmap(jax.random.split)(auto_keys)
        if self.unwrapped.physics == "warp":  # its batch shares one contact buffer, sized for n envs
            state, pool = self.env.reset(keys), self.env.reset(split[:, 1])
        else:  # one reset program for both batches
            both = jax.vmap(self.env.reset)(jnp.stack([keys, split[:, 1]]))
            state, pool = (jax.tree.map(lambda x, i=i: x[i], both) for i in range(2))
        info = {**state.info, "autoreset_key": auto_keys, "final_obs": state.obs,
                "autoreset_pool": {**self._pack(pool, state.info), "key": split[:, 0]},
                "autoreset_ready": jnp.ones(n, bool)}
        return state.replace(info=info)

    def step(self, state: State, action: jax.Array) -> State:
        state = self.env.step(state, action)
        state = state.replace(info={**state.info, "final_obs": state.obs})
        done = state.done > 0
        n = done.shape[0]
        refill_at = self.refill_at or max(1, n // 2)

        pool, ready = state.info["autoreset_pool"], state.info["autoreset_ready"]
        keys = state.info["autoreset_key"]

        def refill(pool: dict) -> dict:
            split = jax.vmap(jax.random.split)(keys)  # [:, 1] starts the next episode, [:, 0] is the next key
            fresh = {**self._pack(self.env.reset(split[:, 1]), pool["info"]), "key": split[:, 0]}
            return select(~ready, fresh, pool)

        need = jnp.any(done & ~ready) | (jnp.sum(~ready) >= refill_at)
        pool = jax.lax.cond(need, refill, lambda p: p, pool)
        ready = ready | need
        # A select on every step, not a lax.cond on any env finishing: XLA copies the whole state that
        # a conditional's other branch passes through, which cost more than the select (docs/performance.md).
        new = select(done, pool, {**self._pack(state, pool["info"]), "key": keys})
        info = {**state.info, **new["info"], "autoreset_key": new["key"],
                "autoreset_pool": pool, "autoreset_ready": ready & ~done}
        return state.replace(data=new["data"], obs=new["obs"], info=info)


def under_episode_stats(env: Env, wrap: Callable[[Env], Env]) -> Env:
    """``wrap(env)``, put under ``env``'s :class:`EpisodeStats` when it has one (what a learner's ``wrap_env``
    receives), so that the statistics see what the wrapper makes of each step: an episode that ends where
    it ends it, only the real steps of a look-ahead."""
    if isinstance(env, EpisodeStats):
        return EpisodeStats(wrap(env.env))
    return wrap(env)


def wrap_for_training(env: Env, num_envs: int) -> Env:
    """The standard batched stack: packed physics state, episode statistics, vmap, auto-reset."""
    return AutoReset(Vmap(EpisodeStats(PackedState(env)), num_envs))
