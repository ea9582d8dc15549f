"""`OffPolicyTrainer`: the training loop of the off-policy family (every
:class:`~crax.learners.off_policy.family.OffPolicyLearner`).

One iteration, per seed and inside one jitted call: ``unroll_length`` steps of ``num_envs`` envs
(:class:`~crax.learners.shared.trainer.BaseTrainer`'s rollout, random actions until ``learning_starts``),
the normalizer update, the multiplier step on the rollout's violation, the n-step transitions
written into the replay buffer, then ``updates_per_iteration`` gradient steps on batches drawn
from it (by ``lax.scan``; none until the buffer holds ``learning_starts`` transitions). The buffer
is part of the train state, so checkpoints and resumes carry it.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx, struct

from crax.core import observation
from crax.core.env import Env
from crax.core.observation import Observation
from crax.devices import distributed
from crax.learners.off_policy.family import OffPolicyConfig, OffPolicyLearner
from crax.learners.off_policy.replay import ReplayBuffer
from crax.learners.shared.learner import Learner
from crax.learners.shared.trainer import BaseTrainer, TrainState, Transition, episode_metrics, expand_terms, finite_flag


@struct.dataclass
class OffPolicyState(TrainState):
    """The shared train state and the replay buffer."""

    replay: Any = None


def n_step_transitions(tr: Transition, n: int, discounting: float) -> dict[str, jax.Array]:
    """Transitions ``(T·N, ...)`` with n-step returns from one rollout ``(T, N, ...)``.

    For step t: ``reward`` = Σ_{j<k} γ^j r_{t+j} (and ``cost`` likewise), ``next_obs`` the true next
    observation after step t+k−1 (``final_obs``, so truncated episodes bootstrap from it) and
    ``discount`` = γ^k, 0 if step t+k−1 terminated; k = n, or fewer where the episode ends first or
    the rollout does (its last steps). ``obs`` and ``next_obs`` keep the observation's structure and
    dtypes (a dict's uint8 images stay uint8).
    """
    length = tr.reward.shape[0]
    termination = tr.done * (1.0 - tr.truncation)
    cost_axes = (None,) * (tr.cost.ndim - tr.reward.ndim)

    def shifted(x: jax.Array, j: int) -> jax.Array:
        return jnp.concatenate([x[j:], jnp.zeros((j, *x.shape[1:]), x.dtype)]) if j else x

    reward, cost = jnp.zeros_like(tr.reward), jnp.zeros_like(tr.cost)
    next_obs, discount = tr.final_obs, jnp.zeros_like(tr.reward)
    open_ = jnp.ones_like(tr.reward)  # 1 while the n-step sum still runs (no episode end yet)
    for j in range(n):  # n is a small static count (the config's n_step)
        valid = (jnp.arange(length) < length - j).astype(tr.reward.dtype)[:, None] * open_
        weight = discounting**j * valid
        reward = reward + weight * shifted(tr.reward, j)
        cost = cost + (weight[(...,) + cost_axes] if cost_axes else weight) * shifted(tr.cost, j)
        last = valid * jnp.maximum(shifted(tr.done, j), float(j == n - 1) * jnp.ones_like(valid))
        last = jnp.where(jnp.arange(length)[:, None] == length - 1 - j, valid, last)  # the rollout ends here
        ends = last > 0
        next_obs = jax.tree.map(lambda f, o, ends=ends: jnp.where(ends.reshape(ends.shape + (1,) * (o.ndim - 2)), f, o),
                                jax.tree.map(lambda f, j=j: shifted(f, j), tr.final_obs), next_obs)
        discount = jnp.where(last > 0, discounting ** (j + 1) * (1.0 - shifted(termination, j)), discount)
        open_ = open_ * (1.0 - last)
    flat = lambda x: jax.tree.map(lambda y: y.reshape((-1, *y.shape[2:])), x)  # noqa: E731
    return {"obs": flat(tr.obs), "action": flat(jnp.tanh(tr.u)), "reward": flat(reward), "cost": flat(cost),
            "next_obs": flat(next_obs), "discount": flat(discount)}


class OffPolicyTrainer(BaseTrainer):
    """Compiles the training iteration of one off-policy learner class on one env, for all seeds at
    once (see :class:`~crax.learners.shared.trainer.BaseTrainer` for ``init``, ``run`` and ``evaluate``)."""

    learner_cls: type[OffPolicyLearner]
    config: OffPolicyConfig

    def __init__(self, learner_cls: type[OffPolicyLearner], config: OffPolicyConfig, env: Env,
                 devices: list[distributed.Device] | None = None):
        super().__init__(learner_cls, config, env, devices)

    def _build(self, key: jax.Array) -> tuple[OffPolicyLearner, nnx.Dict]:
        learner = self.learner_cls(self.config, self.observation_spec, self.action_size, self.episode_length,
                                   rngs=nnx.Rngs(key))
        return learner, learner.optimizers()

    def _example(self) -> dict[str, Any]:
        """One transition of zeros, shaped and typed as the buffer stores it (images as uint8)."""
        cost_shape = (len(self.cost_terms),) if self.cost_terms else ()
        zero = jnp.zeros((), jnp.float32)
        obs = observation.zeros(self.observation_spec)
        return {"obs": obs, "action": jnp.zeros((self.action_size,), jnp.float32), "reward": zero,
                "cost": jnp.zeros(cost_shape, jnp.float32), "next_obs": obs, "discount": zero}

    def _init_one(self, key: jax.Array) -> OffPolicyState:
        ts = self._fresh(key)
        replay = ReplayBuffer.empty(self._example(), self.config.buffer_size)
        return OffPolicyState(model=ts.model, env=ts.env, key=ts.key, env_steps=ts.env_steps,
                              iteration=ts.iteration, replay=replay)

    def _explore(self, learner: Learner, obs: Observation, key: jax.Array, env_steps: jax.Array):
        u, loc, scale = super()._explore(learner, obs, key, env_steps)
        warm = env_steps < self.config.learning_starts
        random = jax.random.normal(jax.random.fold_in(key, 1), u.shape)
        return jnp.where(warm, random, u), loc, scale

    def _iteration(self, ts: TrainState) -> tuple[OffPolicyState, dict[str, jax.Array]]:
        assert isinstance(ts, OffPolicyState)
        c = self.config
        keys = jax.vmap(lambda k: jax.random.split(k, 3))(ts.key)
        env_state, tr = self._rollout(ts.model, ts.env, keys[:, 1], ts.env_steps, c.unroll_length)
        # Every seed's buffer fills alike, so one unbatched flag decides: the updates' lax.cond stays
        # a branch under vmap and skips them before learning_starts rather than computing and discarding.
        filled = jax.vmap(lambda replay: replay.size_after(c.steps_per_iteration))(ts.replay)
        ready = jnp.min(filled) >= c.learning_starts
        model, replay, metrics = jax.vmap(self._learn, in_axes=(0, 0, 0, 0, None))(
            ts.model, ts.replay, tr, keys[:, 2], ready)
        steps = jnp.asarray(c.steps_per_iteration, jnp.int32)
        new = OffPolicyState(model=model, env=env_state, key=keys[:, 0], env_steps=ts.env_steps + steps,
                             iteration=ts.iteration + 1, replay=replay)
        return new, metrics

    def _learn(self, model, replay: ReplayBuffer, tr: Transition, key: jax.Array, ready: jax.Array):
        """One seed's update from its rollout ``(T, N, ...)``: normalizer, multiplier, buffer, and the
        gradient steps if ``ready`` (the buffer holds ``learning_starts`` transitions once this rollout is in)."""
        c = self.config
        learner, optimizers = nnx.merge(self.graphdef, model)
        if c.normalize_observations:
            learner.update_normalizer(tr.obs)
        violation = self.violation(learner, tr)
        learner.multiplier_update(violation)
        replay = replay.insert(n_step_transitions(tr, c.n_step, c.discounting))
        graphdef, before = nnx.split((learner, optimizers))

        def step(state, x):
            k, i = x
            k_sample, k_update = jax.random.split(k)
            learner, optimizers = nnx.merge(graphdef, state)
            metrics = learner.update(optimizers, replay.sample(k_sample, c.batch_size), k_update, i)
            return nnx.state((learner, optimizers)), metrics

        steps = (jax.random.split(key, c.updates_per_iteration), jnp.arange(c.updates_per_iteration))

        def train(state):
            return jax.lax.scan(step, state, steps)

        def skip(state):
            shapes = jax.eval_shape(train, state)[1]
            return state, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)

        new_model, update_metrics = jax.lax.cond(ready, train, skip, before)
        metrics = {
            **episode_metrics(tr),
            "constraint/violation": violation,
            **{f"multiplier/{k}": v for k, v in learner.multipliers().items()},
            **jax.tree.map(lambda m: m.mean(), update_metrics),
            "replay/size": replay.size.astype(jnp.float32),
        }
        metrics = expand_terms(metrics, self.cost_terms)
        metrics["train/nonfinite"] = finite_flag(new_model, metrics)
        return new_model, replay, metrics
