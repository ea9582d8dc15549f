"""`ConstrainedPPO`: the one training loop that every learner shares, and its hooks.

A learner is an ``nnx.Module`` holding the actor, the reward and cost critics, the observation
normalizer and its multiplier state (``Multiplier`` variables). Algorithms subclass it and
override only hooks:

* penalty hooks: :meth:`ConstrainedPPO.advantage` (how ``Â_r`` and ``Â_c`` mix into the advantage
  of the clipped surrogate) or, for objectives that are not a mixed advantage,
  :meth:`ConstrainedPPO.policy_loss`;
* the multiplier hook :meth:`ConstrainedPPO.multiplier_update` (called once per iteration with the
  per-step violation ``v = ĉ − d/T``), with :meth:`ConstrainedPPO.init_multipliers` creating its state;
* environment hooks :meth:`ConstrainedPPO.wrap_env` (e.g. Saute's budget) and
  :meth:`ConstrainedPPO.training_reward` (e.g. PPO-Cost's ``r − w·c``).

:class:`Trainer` owns the loop: rollout by ``lax.scan`` over the batched env, normalizer update,
GAE for reward and cost, the multiplier step, and SGD epochs × minibatches by ``lax.scan``, all in
one jitted function (``iterations_per_call`` iterations per call), vmapped over ``num_seeds``
independent seeds. The model is split once (``nnx.split``) and merged inside the traced function.

Decisions not fixed by SPEC §5 (recorded here):

* The multiplier step runs before the SGD epochs of an iteration, on that iteration's rollout, so
  the policy update already uses the multiplier of the freshest cost estimate.
* GAE runs once per iteration over each env's whole contiguous rollout with the critics after the
  normalizer update; advantages are normalized over the whole iteration batch (reward and cost
  separately); critic targets are the un-normalized GAE returns.
* Entropy bonus uses the entropy of the pre-squash Gaussian.
* The value loss is ``value_loss_coef · MSE`` per critic, with 0.25 reproducing Brax's ``0.5 · 0.5 · MSE``.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Annotated, Any, ClassVar

import jax
import jax.numpy as jnp
import optax
import tyro
from flax import nnx, struct

from crax.env import AutoReset, Env, EpisodeStats, State, Vmap
from crax.learners.networks import (
    MLP,
    Normalizer,
    TanhGaussianActor,
    gaussian_entropy,
    gaussian_kl,
    gaussian_log_prob,
)

# Integer flags that also accept scientific notation on the command line: --total-steps 2e6.
Steps = Annotated[
    int,
    tyro.constructors.PrimitiveConstructorSpec(
        nargs=1,
        metavar="INT",
        instance_from_str=lambda args: int(float(args[0])),
        is_instance=lambda x: isinstance(x, int),
        str_from_instance=lambda x: [str(x)],
    ),
]


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Hyperparameters shared by every constrained PPO learner (defaults: SPEC §5).

    Batch layout (Brax's convention): one training iteration collects ``batch_size ×
    num_minibatches`` trajectory segments of ``unroll_length`` steps. The ``num_envs`` parallel envs
    therefore each run ``batch_size · num_minibatches · unroll_length / num_envs`` consecutive
    steps per iteration (defaults: 2048 envs × 128 steps = 262,144 env steps). That batch is
    shuffled and cut into ``num_minibatches`` minibatches of ``batch_size · unroll_length``
    transitions (8192), and each of the ``num_epochs`` epochs takes one Adam step per minibatch
    (32 × 6 = 192 steps per iteration). ``batch_size · num_minibatches`` must be a multiple of
    ``num_envs``. Learners extend this class with their own fields.
    """

    learning_rate: float = 5e-4
    """Adam learning rate (actor and both critics)."""
    entropy_cost: float = 5e-3
    """Weight of the policy entropy bonus."""
    discounting: float = 0.99
    """Discount factor γ for reward and cost returns."""
    gae_lambda: float = 0.95
    """GAE λ for reward and cost advantages."""
    clip_epsilon: float = 0.3
    """PPO ratio clip ε."""
    reward_scaling: float = 0.1
    """Multiplies rewards before GAE (costs are never scaled)."""
    value_loss_coef: float = 0.25
    """Weight of each critic's mean squared error (0.25 = Brax's 0.5·0.5)."""
    max_grad_norm: float | None = None
    """Global gradient-norm clip; None disables clipping (Brax's default)."""
    normalize_observations: bool = True
    """Standardize observations with running mean/variance statistics."""
    actor_hidden: tuple[int, ...] = (32, 32, 32, 32)
    """Hidden layer sizes of the policy MLP (swish)."""
    critic_hidden: tuple[int, ...] = (256, 256, 256, 256, 256)
    """Hidden layer sizes of the reward critic and of the cost critic (swish)."""
    num_envs: int = 2048
    """Parallel environments per seed."""
    unroll_length: int = 8
    """Length of a trajectory segment; a minibatch is batch_size segments."""
    batch_size: int = 1024
    """Trajectory segments per minibatch (Brax convention, see the class docstring)."""
    num_minibatches: int = 32
    """Minibatches per epoch."""
    num_epochs: int = 6
    """SGD epochs over each iteration's batch."""
    total_steps: Steps = 100_000_000
    """Environment steps to train for, per seed (rounded up to whole iterations)."""
    safety_bound: float = 25.0
    """Episodic cost budget d; the constraint signal is v = ĉ − d/T with ĉ the mean per-step cost."""
    num_evals: int = 5
    """Deterministic evaluations during training (evenly spaced, the last at the end); 0 disables."""
    eval_envs: int = 128
    """Episodes (parallel envs) per evaluation."""
    seed: int = 0
    """Random seed; seed i of a multi-seed run uses a key split from it."""
    num_seeds: int = 1
    """Independent seeds trained together under one jax.vmap."""
    iterations_per_call: int = 1
    """Training iterations per compiled call (metrics stay per iteration)."""
    checkpoint_every: int = 10
    """Write a checkpoint every this many iterations (and always at the end)."""

    def __post_init__(self) -> None:
        positive = ("num_envs", "unroll_length", "batch_size", "num_minibatches", "num_epochs", "total_steps",
                    "eval_envs", "num_seeds", "iterations_per_call", "checkpoint_every")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"config field {name!r} must be a positive integer, got {value!r}")
        for name in ("learning_rate", "clip_epsilon", "reward_scaling"):
            if not getattr(self, name) > 0:
                raise ValueError(f"config field {name!r} must be > 0, got {getattr(self, name)!r}")
        for name in ("discounting", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"config field {name!r} must lie in [0, 1], got {getattr(self, name)!r}")
        if self.safety_bound < 0:
            raise ValueError(f"config field 'safety_bound' must be >= 0, got {self.safety_bound!r}")
        if self.num_evals < 0:
            raise ValueError(f"config field 'num_evals' must be >= 0, got {self.num_evals!r}")
        if (self.batch_size * self.num_minibatches) % self.num_envs:
            raise ValueError(
                f"batch_size * num_minibatches ({self.batch_size} * {self.num_minibatches}) must be a multiple of "
                f"num_envs ({self.num_envs})"
            )
        if any(h < 1 for h in (*self.actor_hidden, *self.critic_hidden)):
            raise ValueError("hidden layer sizes must be positive")

    @property
    def steps_per_env(self) -> int:
        """Consecutive steps each env runs per iteration."""
        return self.batch_size * self.num_minibatches * self.unroll_length // self.num_envs

    @property
    def steps_per_iteration(self) -> int:
        """Environment steps per iteration and seed."""
        return self.batch_size * self.num_minibatches * self.unroll_length

    @property
    def num_iterations(self) -> int:
        return -(-self.total_steps // self.steps_per_iteration)


class Multiplier(nnx.Variable):
    """Constraint-controller state (λ, κ, ν, PID terms): logged and checkpointed, never trained."""


@struct.dataclass
class PolicyBatch:
    """What a penalty hook sees for one minibatch (per-sample arrays, shape ``(B,)``).

    ``ratio`` is π_θ(u|s)/π_old(u|s); ``adv_r``/``adv_c`` are normalized advantages; ``kl`` is the
    per-state KL(π_θ ‖ π_old); ``violation`` the iteration's scalar v = ĉ − d/T.
    """

    ratio: jax.Array
    adv_r: jax.Array
    adv_c: jax.Array
    kl: jax.Array
    violation: jax.Array


def clipped_surrogate(ratio: jax.Array, adv: jax.Array, clip_epsilon: float) -> jax.Array:
    """PPO's pessimistic clipped surrogate (to maximize), mean over the batch."""
    clipped = jnp.clip(ratio, 1.0 - clip_epsilon, 1.0 + clip_epsilon)
    return jnp.mean(jnp.minimum(ratio * adv, clipped * adv))


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


def _normalize(x: jax.Array) -> jax.Array:
    return (x - x.mean()) / (x.std() + 1e-8)


class ConstrainedPPO(nnx.Module):
    """Actor, reward critic, cost critic, observation normalizer and multiplier state, plus hooks.

    With no hook overridden this is plain PPO on the reward (the cost critic is still trained,
    so ``Â_c`` is always available). Subclasses set ``name`` and ``Config`` and override hooks only.
    """

    name: ClassVar[str] = "constrained-ppo"
    Config: ClassVar[type[PPOConfig]] = PPOConfig

    def __init__(self, config: PPOConfig, observation_size: int, action_size: int, episode_length: int, *,
                 rngs: nnx.Rngs):
        self.config = config
        self.episode_length = int(episode_length)
        self.actor = TanhGaussianActor(observation_size, action_size, tuple(config.actor_hidden), rngs=rngs)
        self.reward_critic = MLP(observation_size, tuple(config.critic_hidden), 1, rngs=rngs)
        self.cost_critic = MLP(observation_size, tuple(config.critic_hidden), 1, rngs=rngs)
        self.normalizer = Normalizer(observation_size)
        self.init_multipliers()

    # ---- hooks --------------------------------------------------------------------------------

    @classmethod
    def wrap_env(cls, env: Env, config: PPOConfig) -> Env:
        """Environment hook: wraps the single (unbatched, episode-tracked) env. Default: unchanged."""
        return env

    def training_reward(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        """Environment hook: the reward the learner optimizes (before reward scaling)."""
        return reward

    def init_multipliers(self) -> None:
        """Creates the learner's :class:`Multiplier` variables (called by ``__init__``)."""

    def multiplier_update(self, violation: jax.Array) -> None:
        """Multiplier hook: updates the :class:`Multiplier` variables from v = ĉ − d/T, once per iteration."""

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        """Penalty hook: the advantage fed to the clipped surrogate. Default: Â_r."""
        return adv_r

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        """Penalty hook: the policy loss (to minimize) and extra metrics. Default: −clip surrogate."""
        adv = self.advantage(batch.adv_r, batch.adv_c, batch.violation)
        return -clipped_surrogate(batch.ratio, adv, self.config.clip_epsilon), {}

    # ---- shared pieces ------------------------------------------------------------------------

    def multipliers(self) -> dict[str, jax.Array]:
        """Current multiplier values by attribute name (for logging)."""
        return {k: v[...] for k, v in vars(self).items() if isinstance(v, Multiplier)}

    def penalty(self, variable: Multiplier) -> jax.Array:
        """A multiplier's value as a constant of the loss."""
        return jax.lax.stop_gradient(variable[...])

    def normalize(self, obs: jax.Array) -> jax.Array:
        return self.normalizer(obs) if self.config.normalize_observations else obs

    def policy(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Location and scale of the pre-squash Gaussian at raw observations."""
        return self.actor(self.normalize(obs))

    def values(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Reward and cost values at raw observations."""
        x = self.normalize(obs)
        return self.reward_critic(x)[..., 0], self.cost_critic(x)[..., 0]

    def violation(self, mean_step_cost: jax.Array) -> jax.Array:
        """Per-step constraint violation v = ĉ − d/T."""
        return mean_step_cost - self.config.safety_bound / self.episode_length


@struct.dataclass
class TrainState:
    """Everything that evolves during training, one pytree (leading seed axis when batched)."""

    model: Any  # nnx.State of (learner, optimizer)
    env: State
    key: jax.Array
    env_steps: jax.Array
    iteration: jax.Array


@struct.dataclass
class Transition:
    obs: jax.Array
    u: jax.Array
    logp: jax.Array
    loc: jax.Array
    scale: jax.Array
    reward: jax.Array
    cost: jax.Array
    done: jax.Array
    truncation: jax.Array
    final_obs: jax.Array
    episode: dict[str, jax.Array]


class Trainer:
    """Compiles the training iteration of one learner class on one env, for all seeds at once.

    ``init(key)`` builds ``num_seeds`` independent learners (vmapped), ``run(state, n)`` runs ``n``
    iterations (one jitted call; metrics come back per seed and iteration, shape ``(S, n)``), and
    ``evaluate(state, key)`` runs one deterministic episode on ``eval_envs`` envs per seed.
    """

    def __init__(self, learner_cls: type[ConstrainedPPO], config: PPOConfig, env: Env):
        if type(config) is not learner_cls.Config:
            raise ValueError(f"config must be a {learner_cls.Config.__qualname__} for learner "
                             f"{learner_cls.name!r}, got {type(config).__qualname__}")
        self.learner_cls = learner_cls
        self.config = config
        self.env = env
        single = learner_cls.wrap_env(EpisodeStats(env), config)
        self.train_env = AutoReset(Vmap(single, config.num_envs))
        self.flat_env = AutoReset(Vmap(single, config.num_envs * config.num_seeds))
        self.eval_env = Vmap(single, config.eval_envs)
        self.observation_size = single.observation_size
        self.action_size = env.action_size
        self.episode_length = env.episode_length
        self.graphdef = nnx.split(nnx.eval_shape(lambda: self._build(jax.random.key(0))))[0]
        self._init = jax.jit(jax.vmap(self._init_one))
        self._run = jax.jit(self._run_impl, static_argnums=1)
        self._compiled: dict[int, Any] = {}
        self._eval = jax.jit(jax.vmap(self._evaluate_one))

    # ---- construction -------------------------------------------------------------------------

    def _build(self, key: jax.Array) -> tuple[ConstrainedPPO, nnx.Optimizer]:
        c = self.config
        learner = self.learner_cls(c, self.observation_size, self.action_size, self.episode_length,
                                   rngs=nnx.Rngs(key))
        tx = optax.adam(c.learning_rate)
        if c.max_grad_norm is not None:
            tx = optax.chain(optax.clip_by_global_norm(c.max_grad_norm), tx)
        return learner, nnx.Optimizer(learner, tx, wrt=nnx.Param)

    def _init_one(self, key: jax.Array) -> TrainState:
        k_model, k_env, k_train = jax.random.split(key, 3)
        model = nnx.state(self._build(k_model))
        zero = jnp.zeros((), jnp.int32)
        return TrainState(model=model, env=self.train_env.reset(k_env), key=k_train, env_steps=zero, iteration=zero)

    def seed_keys(self, key: jax.Array) -> jax.Array:
        return jax.random.split(key, self.config.num_seeds)

    def init(self, key: jax.Array) -> TrainState:
        """Fresh learners and envs for every seed (leading axis ``num_seeds``)."""
        return self._init(self.seed_keys(key))

    def abstract_state(self) -> TrainState:
        """Shapes and dtypes of :meth:`init`'s result, without computing it."""
        return jax.eval_shape(self._init, self.seed_keys(jax.random.key(0)))

    def reset_envs(self, state: TrainState, key: jax.Array) -> TrainState:
        """Fresh env states (e.g. after restoring a checkpoint, which does not store envs)."""
        env = jax.jit(jax.vmap(self.train_env.reset))(self.seed_keys(key))
        return state.replace(env=env)

    def learner(self, state: TrainState, seed: int = 0) -> ConstrainedPPO:
        """The learner module of one seed (a concrete NNX module, e.g. for a notebook)."""
        model = jax.tree.map(lambda x: x[seed], state.model)
        return nnx.merge(self.graphdef, model)[0]

    # ---- the loop -----------------------------------------------------------------------------

    def compile(self, state: TrainState, num_iterations: int) -> float:
        """Compiles ``run`` for ``num_iterations`` ahead of time; returns the seconds it took."""
        n = int(num_iterations)
        if n in self._compiled:
            return 0.0
        t = time.perf_counter()
        self._compiled[n] = self._run.lower(state, n).compile()
        return time.perf_counter() - t

    def run(self, state: TrainState, num_iterations: int) -> tuple[TrainState, dict[str, jax.Array]]:
        """Runs ``num_iterations`` training iterations for every seed in one compiled call."""
        n = int(num_iterations)
        self.compile(state, n)
        return self._compiled[n](state)

    def _run_impl(self, state: TrainState, n: int):
        state, metrics = jax.lax.scan(lambda ts, _: self._iteration(ts), state, None, length=n)
        return state, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), metrics)  # (S, n)

    def _rollout(self, models, env_state: State, keys: jax.Array):
        """Rollout of every seed: arrays ``(S, T, N, ...)``.

        Policies run vmapped over seeds, but the envs of all seeds step as one flat batch of
        ``S · N`` envs outside that vmap: under ``jax.vmap`` the auto-reset's ``lax.cond`` would
        turn into a select and run the reset at every step.
        """
        s_, n_ = self.config.num_seeds, self.config.num_envs
        flat = lambda x: x.reshape((s_ * n_, *x.shape[2:]))  # noqa: E731
        unflat = lambda x: x.reshape((s_, n_, *x.shape[1:]))  # noqa: E731

        def act(model, obs, k):
            learner = nnx.merge(self.graphdef, model)[0]
            loc, scale = learner.policy(obs)
            return loc + scale * jax.random.normal(k, loc.shape), loc, scale

        def reward(model, r, c):
            return nnx.merge(self.graphdef, model)[0].training_reward(r, c)

        def step(s: State, ks: jax.Array):
            u, loc, scale = jax.vmap(act)(models, s.obs, ks)
            ns = jax.tree.map(unflat, self.flat_env.step(jax.tree.map(flat, s), flat(jnp.tanh(u))))
            tr = Transition(
                obs=s.obs, u=u, logp=gaussian_log_prob(u, loc, scale), loc=loc, scale=scale,
                reward=jax.vmap(reward)(models, ns.reward, ns.cost), cost=ns.cost, done=ns.done,
                truncation=ns.truncation, final_obs=ns.info["final_obs"],
                episode={k: ns.metrics[f"episode/{k}"] for k in ("return", "cost", "length", "done")},
            )
            return ns, tr

        step_keys = jax.vmap(lambda k: jax.random.split(k, self.config.steps_per_env))(keys)  # (S, T)
        env_state, tr = jax.lax.scan(step, env_state, jnp.swapaxes(step_keys, 0, 1))
        return env_state, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), tr)

    def _iteration(self, ts: TrainState):
        keys = jax.vmap(lambda k: jax.random.split(k, 3))(ts.key)
        env_state, tr = self._rollout(ts.model, ts.env, keys[:, 1])
        model, metrics = jax.vmap(self._learn)(ts.model, tr, keys[:, 2])
        steps = jnp.asarray(self.config.steps_per_iteration, jnp.int32)
        new = TrainState(model=model, env=env_state, key=keys[:, 0], env_steps=ts.env_steps + steps,
                         iteration=ts.iteration + 1)
        return new, metrics

    def _learn(self, model, tr: Transition, key: jax.Array):
        """One seed's update from its rollout ``(T, N, ...)``: normalizer, GAE, multiplier, SGD."""
        c = self.config
        learner, opt = nnx.merge(self.graphdef, model)
        if c.normalize_observations:
            learner.normalizer.update(tr.obs)
        v_r, v_c = learner.values(tr.obs)
        nv_r, nv_c = learner.values(tr.final_obs)
        termination = tr.done * (1.0 - tr.truncation)
        adv_r, target_r = gae(tr.reward * c.reward_scaling, v_r, nv_r, termination, tr.done,
                              c.discounting, c.gae_lambda)
        adv_c, target_c = gae(tr.cost, v_c, nv_c, termination, tr.done, c.discounting, c.gae_lambda)

        mean_cost = tr.cost.mean()
        violation = learner.violation(mean_cost)
        learner.multiplier_update(violation)

        flat = lambda x: x.reshape((-1, *x.shape[2:]))  # noqa: E731
        batch = {
            "obs": flat(tr.obs), "u": flat(tr.u), "logp": flat(tr.logp), "loc": flat(tr.loc),
            "scale": flat(tr.scale), "adv_r": _normalize(flat(adv_r)), "adv_c": _normalize(flat(adv_c)),
            "target_r": flat(target_r), "target_c": flat(target_c),
        }
        model, sgd_metrics = self._update(nnx.state((learner, opt)), batch, violation, key)

        done = tr.episode["done"]
        n_done = done.sum()
        per_episode = lambda x: jnp.sum(x * done) / jnp.maximum(n_done, 1.0)  # noqa: E731
        metrics = {
            "episode/return": per_episode(tr.episode["return"]),
            "episode/cost": per_episode(tr.episode["cost"]),
            "episode/length": per_episode(tr.episode["length"]),
            "episode/count": n_done,
            "constraint/step_cost": mean_cost,
            "constraint/violation": violation,
            **{f"multiplier/{k}": v for k, v in learner.multipliers().items()},
            **jax.tree.map(jnp.mean, sgd_metrics),
        }
        return model, metrics

    def _update(self, model, batch: dict[str, jax.Array], violation: jax.Array, key: jax.Array):
        c = self.config
        n = batch["obs"].shape[0]

        def sgd_step(model, mb):
            learner, opt = nnx.merge(self.graphdef, model)
            grad_fn = nnx.value_and_grad(functools.partial(self._loss, violation=violation), has_aux=True)
            (_, metrics), grads = grad_fn(learner, mb)
            opt.update(learner, grads)
            return nnx.state((learner, opt)), metrics

        def epoch(model, k):
            perm = jax.random.permutation(k, n)
            mbs = jax.tree.map(lambda x: x[perm].reshape((c.num_minibatches, -1, *x.shape[1:])), batch)
            return jax.lax.scan(sgd_step, model, mbs)

        return jax.lax.scan(epoch, model, jax.random.split(key, c.num_epochs))

    def _loss(self, learner: ConstrainedPPO, mb: dict[str, jax.Array], violation: jax.Array):
        c = self.config
        loc, scale = learner.policy(mb["obs"])
        log_ratio = gaussian_log_prob(mb["u"], loc, scale) - mb["logp"]
        ratio = jnp.exp(log_ratio)
        kl = gaussian_kl(loc, scale, mb["loc"], mb["scale"])
        policy_loss, extra = learner.policy_loss(
            PolicyBatch(ratio=ratio, adv_r=mb["adv_r"], adv_c=mb["adv_c"], kl=kl, violation=violation)
        )
        v_r, v_c = learner.values(mb["obs"])
        value_loss_r = jnp.mean((v_r - mb["target_r"]) ** 2)
        value_loss_c = jnp.mean((v_c - mb["target_c"]) ** 2)
        entropy = jnp.mean(gaussian_entropy(scale))
        loss = policy_loss + c.value_loss_coef * (value_loss_r + value_loss_c) - c.entropy_cost * entropy
        metrics = {
            "loss/total": loss,
            "loss/policy": policy_loss,
            "loss/value_reward": value_loss_r,
            "loss/value_cost": value_loss_c,
            "policy/entropy": entropy,
            "policy/kl": jnp.mean(kl),
            "policy/clip_fraction": jnp.mean(jnp.abs(ratio - 1.0) > c.clip_epsilon),
            **extra,
        }
        return loss, metrics

    # ---- evaluation ---------------------------------------------------------------------------

    def evaluate(self, state: TrainState, key: jax.Array) -> dict[str, jax.Array]:
        """One deterministic (mean-action) episode per eval env and seed: mean return, cost, length."""
        return self._eval(state.model, self.seed_keys(key))

    def _evaluate_one(self, model, key: jax.Array) -> dict[str, jax.Array]:
        learner = nnx.merge(self.graphdef, model)[0]
        env = self.eval_env
        n = self.config.eval_envs
        zeros = jnp.zeros((n,), jnp.float32)

        def step(carry, _):
            s, ret, cost, length, finished = carry
            loc, _ = learner.policy(s.obs)
            s = env.step(s, jnp.tanh(loc))
            first = (s.metrics["episode/done"] > 0) & ~finished
            ret = jnp.where(first, s.metrics["episode/return"], ret)
            cost = jnp.where(first, s.metrics["episode/cost"], cost)
            length = jnp.where(first, s.metrics["episode/length"], length)
            return (s, ret, cost, length, finished | first), None

        init = (env.reset(key), zeros, zeros, zeros, jnp.zeros((n,), bool))
        (_, ret, cost, length, _), _ = jax.lax.scan(step, init, None, length=self.episode_length)
        return {"return": ret.mean(), "cost": cost.mean(), "length": length.mean()}
