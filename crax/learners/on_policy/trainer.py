"""`Trainer`: the training loop of the PPO family (every :class:`~crax.learners.on_policy.family.ConstrainedPPO`).

Rollout by ``lax.scan`` over the batched env, normalizer update, GAE for reward and cost, the
multiplier step, and the learner's update hook (PPO's SGD epochs × minibatches by ``lax.scan``, or a
trust-region step), all in one jitted function
(``iterations_per_call`` iterations per call), vmapped over ``num_seeds`` independent seeds. The
model is split once (``nnx.split``) and merged inside the traced function. What every family's
trainer shares (envs, seeds, devices, the rollout, evaluation) is :class:`crax.learners.shared.trainer.BaseTrainer`.

Decisions not fixed by SPEC §5 (recorded here):

* The multiplier step runs before the SGD epochs of an iteration, on that iteration's rollout, so
  the policy update already uses the multiplier of the freshest cost estimate.
* GAE runs once per iteration over each env's whole contiguous rollout with the critics after the
  normalizer update; advantages are normalized over the whole iteration batch, each budgeted cost
  term alone (reward advantages standardized, cost advantages centred by default: ``cost_advantage``,
  docs/DECISIONS.md, decision 76); critic targets are the un-normalized GAE returns. The value of a step's true next
  observation is the next step's value wherever auto-reset made the two observations one
  (:func:`next_values`): the critics run on ``final_obs`` at truncations and the rollout's last
  step only (running them on every step's ``final_obs`` cost 6 % of SPEC's iteration).
* Entropy bonus uses the entropy of the pre-squash Gaussian.
* The value loss is ``value_loss_coef · MSE`` per critic, with 0.25 reproducing Brax's ``0.5 · 0.5 · MSE``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core.env import Env
from crax.core.observation import Observation
from crax.devices import distributed
from crax.learners.on_policy.family import ConstrainedPPO, IterationBatch, PPOConfig, adam
from crax.learners.shared.config import EVAL_POLICIES
from crax.learners.shared.optimizers import actor_learning_rate, set_actor_learning_rate
from crax.learners.shared.trainer import (
    STEP_COST,
    BaseTrainer,
    TrainState,
    Transition,
    default_devices,
    desynchronize,
    episode_metrics,
    expand_terms,
    finite_flag,
    state_sharding,
    step_costs,
)

__all__ = ["EVAL_POLICIES", "STEP_COST", "TrainState", "Trainer", "Transition", "default_devices", "desynchronize",
           "gae", "next_values", "state_sharding", "step_costs"]


def gae(
    rewards: jax.Array,
    values: jax.Array,
    next_values: jax.Array,
    terminations: jax.Array,
    dones: jax.Array,
    discounting: float,
    gae_lambda: float,
) -> tuple[jax.Array, jax.Array]:
    """Generalized advantage estimation over time-major arrays ``(T, ...)``.

    ``next_values[t]`` is the value of the true next observation of step t (``info["final_obs"]``),
    so truncated episodes bootstrap from it; ``terminations`` zero the bootstrap, ``dones``
    (termination or truncation) stop the recursion. Returns ``(advantages, value targets)``.
    """
    deltas = rewards + discounting * (1.0 - terminations) * next_values - values

    def back(acc, x):
        delta, done = x
        acc = delta + discounting * gae_lambda * (1.0 - done) * acc
        return acc, acc

    _, adv = jax.lax.scan(back, jnp.zeros_like(deltas[0]), (deltas, dones), reverse=True)
    return adv, adv + values


def next_values(values: Callable[[Any], Any], obs: Observation, obs_values: Any, final_obs: Observation,
                done: jax.Array, truncation: jax.Array) -> Any:
    """The critics' values at every step's true next observation ``final_obs`` (time-major ``(T, N, ...)``),
    given ``obs_values``, theirs at the steps' observations ``obs`` (flat arrays, or dicts of the state
    vector and images: two observations are equal where every entry is).

    Where an env went on, auto-reset makes ``final_obs[t]`` the next step's ``obs[t + 1]``, whose value
    ``obs_values`` holds: it is taken from there wherever the two observations are equal. ``values`` is
    called on the other rows of ``final_obs`` (truncations, the rollout's last step, any step whose two
    observations differ), a bounded chunk of rows at a time (``lax.while_loop``; one chunk unless more
    than a quarter of the envs needed one). Where an env terminated the value stands in unused (GAE
    zeroes it). So a rollout costs the critics about ``T·N + N`` rows instead of ``2·T·N`` (SPEC:
    264,192 instead of 524,288), for the values of ``values(final_obs)``, up to float rounding.
    """
    t, n = truncation.shape
    rows = t * n
    chunk = min(rows, n + -(-n // 4))
    entries = jax.tree.map(lambda f, o: jnp.any(f[:-1] != o[1:], axis=tuple(range(2, o.ndim))), final_obs, obs)
    differs = functools.reduce(jnp.logical_or, jax.tree.leaves(entries))
    differs = jnp.concatenate([differs, jnp.ones((1, n), bool)])  # the last step has no next obs
    need = ((truncation > 0) | ((done == 0) & differs)).reshape(rows)
    padded = -(-rows // chunk) * chunk
    order = jnp.nonzero(need, size=padded, fill_value=rows)[0]  # past the end: dropped
    count = jnp.sum(need)
    flat_obs = jax.tree.map(lambda x: x.reshape(rows, *x.shape[2:]), final_obs)
    shifted = jax.tree.map(lambda v: jnp.concatenate([v[1:], v[-1:]]).reshape(rows, *v.shape[2:]), obs_values)

    def chunk_values(carry):
        i, out = carry
        idx = jax.lax.dynamic_slice_in_dim(order, i * chunk, chunk)
        v = values(jax.tree.map(lambda x: x.at[idx].get(mode="fill", fill_value=0), flat_obs))
        return i + 1, jax.tree.map(lambda o, w: o.at[idx].set(w.astype(o.dtype), mode="drop"), out, v)

    _, out = jax.lax.while_loop(lambda c: c[0] * chunk < count, chunk_values, (jnp.int32(0), shifted))
    return jax.tree.map(lambda v: v.reshape(t, n, *v.shape[1:]), out)


def standardize(x: jax.Array) -> jax.Array:
    """(x − mean) / (std + 1e-8) over the leading axis: per column of a ``(n, K)`` array (each term alone)."""
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-8)


def normalize_cost(adv_c: jax.Array, how: str) -> tuple[jax.Array, jax.Array]:
    """The cost advantages ``(n,)`` or ``(n, K)`` normalized over the batch as ``cost_advantage`` says,
    each term alone, and what the centred advantages were divided by (one entry per term)."""
    if how == "none":
        return adv_c, jnp.ones(adv_c.shape[1:], adv_c.dtype)
    centred = adv_c - adv_c.mean(axis=0)
    if how == "center":
        return centred, jnp.ones(adv_c.shape[1:], adv_c.dtype)
    scale = adv_c.std(axis=0) + 1e-8
    return centred / scale, scale


class Trainer(BaseTrainer):
    """Compiles the training iteration of one PPO-family learner class on one env, for all seeds at
    once (see :class:`~crax.learners.shared.trainer.BaseTrainer` for ``init``, ``run`` and ``evaluate``)."""

    learner_cls: type[ConstrainedPPO]
    config: PPOConfig

    def __init__(self, learner_cls: type[ConstrainedPPO], config: PPOConfig, env: Env,
                 devices: list[distributed.Device] | None = None):
        super().__init__(learner_cls, config, env, devices)

    def _build(self, key: jax.Array) -> tuple[ConstrainedPPO, nnx.Optimizer]:
        c = self.config
        learner = self.learner_cls(c, self.observation_spec, self.action_size, self.episode_length,
                                   rngs=nnx.Rngs(key))
        return learner, nnx.Optimizer(learner, adam(c), wrt=nnx.Param)

    def _iteration(self, ts: TrainState):
        keys = jax.vmap(lambda k: jax.random.split(k, 3))(ts.key)
        env_state, tr = self._rollout(ts.model, ts.env, keys[:, 1], ts.env_steps, self.config.steps_per_env)
        progress = ts.iteration.astype(jnp.float32) / self.config.num_iterations
        model, metrics = jax.vmap(self._learn)(ts.model, tr, keys[:, 2], progress)
        steps = jnp.asarray(self.config.steps_per_iteration, jnp.int32)
        new = TrainState(model=model, env=env_state, key=keys[:, 0], env_steps=ts.env_steps + steps,
                         iteration=ts.iteration + 1)
        return new, metrics

    def _learn(self, model, tr: Transition, key: jax.Array, progress: jax.Array | float = 0.0):
        """One seed's update from its rollout ``(T, N, ...)``: normalizer, GAE, multiplier, the actor's
        learning rate at ``progress`` (iterations done / the run's), SGD."""
        learner, opt = nnx.merge(self.graphdef, model)
        batch = self.iteration_batch(learner, tr)
        if self.config.lr_decay != "none":
            rate = actor_learning_rate(self.config, jnp.asarray(progress, jnp.float32))
            for optimizer in (opt, *(v for v in vars(learner).values() if isinstance(v, nnx.Optimizer))):
                set_actor_learning_rate(optimizer, rate)
        model, sgd_metrics = self._update(nnx.state((learner, opt)), batch, key)

        metrics = {
            **episode_metrics(tr),
            "constraint/violation": batch.violation,
            **{f"multiplier/{k}": v for k, v in learner.multipliers().items()},
            **jax.tree.map(jnp.mean, sgd_metrics),
        }
        metrics = expand_terms(metrics, self.cost_terms)  # one scalar per budgeted term
        metrics["train/nonfinite"] = finite_flag(model, metrics)
        return model, metrics

    def iteration_batch(self, learner: ConstrainedPPO, tr: Transition) -> IterationBatch:
        """What the update hook receives from one seed's rollout ``(T, N, ...)``: updates the learner's
        normalizer with it, runs GAE for reward and cost, measures the violation and takes the
        multiplier step (all on ``learner``, in place), and returns the flat, normalized batch."""
        c = self.config
        if c.normalize_observations:
            learner.update_normalizer(tr.obs)
        v_r, v_c = learner.values(tr.obs)
        nv_r, nv_c = next_values(learner.values, tr.obs, (v_r, v_c), tr.final_obs, tr.done, tr.truncation)
        termination = tr.done * (1.0 - tr.truncation)
        adv_r, target_r = gae(tr.reward * c.reward_scaling, v_r, nv_r, termination, tr.done,
                              c.discounting, c.gae_lambda)
        per_term = (Ellipsis, None) if self.cost_terms else (Ellipsis,)  # broadcast flags over the term axis
        adv_c, target_c = gae(tr.cost, v_c, nv_c, termination[per_term], tr.done[per_term], c.discounting,
                              c.gae_lambda)

        violation = self.violation(learner, tr)
        learner.multiplier_update(violation)

        flat = lambda x: jax.tree.map(lambda y: y.reshape((-1, *y.shape[2:])), x)  # noqa: E731
        adv_c, cost_scale = normalize_cost(flat(adv_c), c.cost_advantage)
        samples = {
            "obs": flat(tr.obs), "u": flat(tr.u), "logp": flat(tr.logp), "loc": flat(tr.loc),
            "scale": flat(tr.scale), "adv_r": standardize(flat(adv_r)), "adv_c": adv_c,
            "target_r": flat(target_r), "target_c": flat(target_c),
        }
        return IterationBatch(samples=samples, violation=violation, cost_scale=cost_scale)

    def _update(self, model, batch: IterationBatch, key: jax.Array):
        """The learner's update hook on one seed's batch: its new model state and its metrics."""
        learner, opt = nnx.merge(self.graphdef, model)
        metrics = learner.policy_update(opt, batch, key)
        return nnx.state((learner, opt)), metrics
