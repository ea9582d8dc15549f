"""`ConstrainedPPO`: the learner module that every algorithm subclasses, and its hooks.

A learner is an ``nnx.Module`` holding the actor, the reward and cost critics, the observation
normalizer and its multiplier state (``Multiplier`` variables). On an observation with images
(:mod:`crax.core.observation`) it also holds one convolutional encoder the actor and the critics share
(:mod:`crax.learners.shared.encoders`): the critics' value loss trains it, the actor reads its features
under ``stop_gradient``.
Algorithms subclass it and override only hooks:

* penalty hooks: :meth:`ConstrainedPPO.advantage` (how ``Â_r`` and ``Â_c`` mix into the advantage
  of the clipped surrogate) or, for objectives that are not a mixed advantage,
  :meth:`ConstrainedPPO.policy_loss`;
* the multiplier hook :meth:`ConstrainedPPO.multiplier_update` (called once per iteration with the
  per-step violation ``v = ĉ − d/T``: a scalar, or one entry per budgeted term with ``budgets``), with :meth:`ConstrainedPPO.init_multipliers` creating its state;
* environment hooks :meth:`ConstrainedPPO.wrap_env` (e.g. Saute's budget) and
  :meth:`ConstrainedPPO.training_reward` (e.g. PPO-Cost's ``r − w·c``);
* the update hook :meth:`ConstrainedPPO.policy_update`: the actor's update of one iteration. The
  default is PPO's minibatch epochs, each step one optimizer step on the clipped surrogate and the
  critics' value loss together; the trust-region learners (:mod:`crax.learners.trust_region.family`)
  regress the critics alone (:meth:`ConstrainedPPO.fit_critics`) and step the actor their own way.

The loop that calls the hooks is :class:`crax.learners.on_policy.trainer.Trainer`. The loss arithmetic the
hooks evaluate (clipped surrogate, value regression, P3O's, FOCOPS's and CUP's losses) is pure functions in
:mod:`crax.learners.on_policy.losses`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, Literal, cast

import jax
import jax.numpy as jnp
import optax
from flax import nnx, struct

from crax.core import observation
from crax.core.params import ranged
from crax.learners.on_policy.losses import (
    clip_fraction,
    clipped_surrogate,
    combined_loss,
    mean_entropy,
    mean_kl,
    probability_ratio,
    value_regression,
)
from crax.learners.shared.config import ConstraintConfig, ObservationConfig, RunConfig
from crax.learners.shared.encoders import encoded
from crax.learners.shared.gradients import chunk_count, chunked_mean, chunked_rows
from crax.learners.shared.learner import Learner
from crax.learners.shared.networks import MLP, Activation, ActorStd, TanhGaussianActor, gaussian_kl
from crax.learners.shared.optimizers import GradClip, LrDecay, learner_optimizer

CostAdvantage = Literal["center", "standardize", "none"]
"""How an iteration's cost advantages are normalized (``cost_advantage``)."""

ActionSquash = Literal["tanh", "clip"]
"""How the PPO family's Gaussian sample becomes the env's action (``action_squash``)."""


@dataclasses.dataclass(frozen=True)
class PPOConfig(ObservationConfig, ConstraintConfig, RunConfig):
    """The PPO family's algorithm fields (defaults: SPEC §5), after the run's (:class:`RunConfig`) and
    the constraint's (:class:`ConstraintConfig`), which every learner family shares.

    Batch layout (Brax's convention): one training iteration collects ``batch_size ×
    num_minibatches`` trajectory segments of ``unroll_length`` steps. The ``num_envs`` parallel envs
    therefore each run ``batch_size · num_minibatches · unroll_length / num_envs`` consecutive
    steps per iteration (defaults: 2048 envs × 128 steps = 262,144 env steps). That batch is
    shuffled and cut into ``num_minibatches`` minibatches of ``batch_size · unroll_length``
    transitions (8192), and each of the ``num_epochs`` epochs takes one Adam step per minibatch
    (32 × 6 = 192 steps per iteration). ``batch_size · num_minibatches`` must be a multiple of
    ``num_envs``. Learners extend this class with their own fields.
    """

    learning_rate: float = ranged(5e-4, gt=0)
    """Adam learning rate (actor and both critics)."""
    entropy_cost: float = ranged(5e-3, ge=0)
    """Weight of the policy entropy bonus."""
    discounting: float = ranged(0.99, ge=0, le=1)
    """Discount factor γ for reward and cost returns."""
    gae_lambda: float = ranged(0.95, ge=0, le=1)
    """GAE λ for reward and cost advantages."""
    clip_epsilon: float = ranged(0.3, gt=0, le=1)
    """PPO ratio clip ε."""
    reward_scaling: float = ranged(0.1, gt=0)
    """Multiplies rewards before GAE (costs are never scaled)."""
    value_loss_coef: float = ranged(0.25, ge=0)
    """Weight of each critic's mean squared error (0.25 = Brax's 0.5·0.5)."""
    max_grad_norm: float | None = ranged(None, gt=0, optional=True)
    """Gradient-norm clip (> 0) of the global gradient or of each network's (``grad_clip``); None disables
    clipping (Brax's default)."""
    grad_clip: GradClip = "global"
    """What ``max_grad_norm`` clips: the global gradient over the actor and the critics, or each network's
    alone (``per-network``, OmniSafe's; the learner then has one Adam per network)."""
    critic_learning_rate: float | None = ranged(None, gt=0, optional=True)
    """Adam learning rate of the critics; None: ``learning_rate``."""
    lr_decay: LrDecay = "none"
    """The actor's learning rate over the run: constant, or ``linear`` from ``learning_rate`` at the first
    iteration to 0 after the last (OmniSafe's ``linear_lr_decay``; the critics' stays constant)."""
    critic_l2: float = ranged(0.0, ge=0)
    """Weight of the critics' L2 penalty Σθ² in the value loss, per critic (OmniSafe's ``critic_norm_coef``
    with ``use_critic_norm``)."""
    actor_hidden: tuple[int, ...] = ranged((32, 32, 32, 32), ge=1, integer=True)
    """Hidden layer sizes of the policy MLP (swish)."""
    critic_hidden: tuple[int, ...] = ranged((256, 256, 256, 256, 256), ge=1, integer=True)
    """Hidden layer sizes of the reward critic and of the cost critic (swish)."""
    activation: Activation = "swish"
    """The hidden layers' activation in the actor and the critics (OmniSafe's and Safety-Gymnasium's
    baselines: tanh)."""
    actor_std: ActorStd = "state"
    """The actor's scale: from the observation (``state``) or one learned log-std per action dimension
    (``parameter``, OmniSafe's ``gaussian_learning`` actor)."""
    action_squash: ActionSquash = "tanh"
    """How the Gaussian's sample u becomes the env's action in [−1, 1]: ``tanh(u)``, or ``clip(u, −1, 1)``
    (OmniSafe's Gaussian actors: the env clips their actions). Log-probabilities and KLs are u's either way."""
    cost_advantage: CostAdvantage = "center"
    """How the cost advantages are normalized over an iteration's batch, per budgeted term: ``center``
    subtracts their mean and keeps their scale (cost per step; OmniSafe's and safety-starter-agents'
    choice: standardizing kept full weight on a noisy cost direction when costs are rare; the default since
    docs/DECISIONS.md, decision 76), ``standardize`` also divides by their standard deviation (crax before), ``none`` leaves them as GAE gives them. Reward advantages are always
    standardized."""
    critic_chunk: int | None = ranged(None, ge=1, integer=True, optional=True)
    """Rows per chunk of a minibatch when taking the critics' gradient: the same gradient, computed a
    chunk at a time so the activations stay in a CPU's cache (crax.learners.shared.gradients.chunk_count:
    the fewest equal chunks not over it). None: 1024 when JAX's default backend is the CPU, the
    whole minibatch on a GPU or TPU."""
    num_envs: int = ranged(2048, ge=1, integer=True)
    """Parallel environments per seed."""
    unroll_length: int = ranged(8, ge=1, integer=True)
    """Length of a trajectory segment; a minibatch is batch_size segments."""
    batch_size: int = ranged(1024, ge=1, integer=True)
    """Trajectory segments per minibatch (Brax convention, see the class docstring)."""
    num_minibatches: int = ranged(32, ge=1, integer=True)
    """Minibatches per epoch."""
    num_epochs: int = ranged(6, ge=1, integer=True)
    """SGD epochs over each iteration's batch."""
    target_kl: float | None = ranged(None, gt=0, optional=True)
    """OmniSafe's ``kl_early_stop``: the epochs stop after the first whose mean KL(π_start ‖ π_θ) over the
    iteration's batch (summed over action dimensions; π_start the policy when the update began)
    exceeds it (OmniSafe's PPO family: 0.02). None: every epoch runs."""
    desync_episodes: bool = True
    """Start each training env at a random step of its first episode, so iterations sample every
    episode phase (the shortened first episodes are left out of the statistics)."""

    stored_defaults: ClassVar[dict[str, object]] = {"cost_advantage": "standardize"}
    """What a run stored before a field existed ran with (read by ``crax.runs.checkpoint.config_from_dict``)."""

    def __post_init__(self) -> None:
        """The shared checks (every field against its range, the budgets), then the batch layout."""
        super().__post_init__()
        if (self.batch_size * self.num_minibatches) % self.num_envs:
            raise ValueError(
                f"batch_size * num_minibatches ({self.batch_size} * {self.num_minibatches}) must be a multiple of "
                f"num_envs ({self.num_envs})"
            )

    def critic_chunk_rows(self, rows: int) -> int:
        """Rows per chunk of the critics' gradient on a minibatch of ``rows``: ``critic_chunk``, or its
        default for JAX's default backend (1024 on a CPU; the whole minibatch on a GPU or TPU)."""
        chunk = self.critic_chunk
        if chunk is None:
            chunk = 1024 if jax.default_backend() == "cpu" else rows
        return rows // chunk_count(rows, chunk)

    @property
    def steps_per_env(self) -> int:
        """Consecutive steps each env runs per iteration."""
        return self.batch_size * self.num_minibatches * self.unroll_length // self.num_envs

    @property
    def steps_per_iteration(self) -> int:
        """Environment steps per iteration and seed."""
        return self.batch_size * self.num_minibatches * self.unroll_length


@struct.dataclass
class PolicyBatch:
    """What a penalty hook sees for one minibatch (per-sample arrays, shape ``(B,)``).

    ``ratio`` is π_θ(u|s)/π_old(u|s); ``adv_r``/``adv_c`` are normalized advantages; ``kl`` is the
    per-state KL(π_θ ‖ π_old); ``violation`` the iteration's v = ĉ − d/T, of the learner's
    :attr:`~ConstrainedPPO.cost_shape`: a scalar for the one bound on the summed cost, or one entry
    per budgeted term (shape ``(K,)``, each its term's ĉ_k − d_k/T) with ``budgets``; ``adv_c`` then
    has shape ``(B, K)``.
    """

    ratio: jax.Array
    adv_r: jax.Array
    adv_c: jax.Array
    kl: jax.Array
    violation: jax.Array


@struct.dataclass
class IterationBatch:
    """What the update hook sees for one iteration: the flattened rollout and the constraint signal.

    ``samples`` holds per-transition arrays of leading size ``n`` (``obs``, ``u``, the rollout
    policy's ``logp``/``loc``/``scale``, the normalized advantages ``adv_r``/``adv_c`` and the critics'
    targets ``target_r``/``target_c``); ``violation`` is v = ĉ − d/T (shape
    :attr:`~ConstrainedPPO.cost_shape`); ``cost_scale`` (shape :attr:`~ConstrainedPPO.cost_shape`) is
    what the centred cost advantages were divided by (their standard deviation with ``cost_advantage=
    "standardize"``, else 1), so ``adv_c · cost_scale`` is in cost per step, like ``violation``.
    """

    samples: dict[str, jax.Array]
    violation: jax.Array
    cost_scale: jax.Array


Loss = Callable[["ConstrainedPPO", dict[str, jax.Array]], tuple[jax.Array, dict[str, jax.Array]]]
"""A minibatch loss: ``loss(learner, minibatch) -> (scalar to minimize, metrics)``."""


def adam(config: PPOConfig) -> optax.GradientTransformation:
    """A whole learner's optimizer (:func:`crax.learners.shared.optimizers.learner_optimizer`): Adam at
    ``learning_rate`` after global-norm clipping by ``max_grad_norm``, or one Adam per network."""
    return learner_optimizer(config)


class ConstrainedPPO(Learner, name="constrained-ppo", config=PPOConfig):
    """Actor, reward critic, cost critic, observation normalizer and multiplier state, plus hooks.

    With no hook overridden this is plain PPO on the reward (the cost critic is still trained,
    so ``Â_c`` is always available). Subclasses set ``name`` and ``Config`` and override hooks only;
    the constraint, multiplier and environment hooks are :class:`~crax.learners.shared.learner.Learner`'s.
    """

    config: PPOConfig

    def __init__(self, config: PPOConfig, observation_spec: Any, action_size: int, episode_length: int, *,
                 rngs: nnx.Rngs):
        """``observation_spec``: one observation's shapes (:attr:`crax.core.env.Env.observation_spec`), or a
        flat observation's size. On a structured observation the actor and the critics share an encoder."""
        self.setup_constraint(config, observation_spec, episode_length)
        self.encoder = self.build_encoder(observation_spec, rngs)
        act, inputs = config.activation, self.network_inputs(observation_spec)
        self.actor = TanhGaussianActor(inputs, action_size, tuple(config.actor_hidden), rngs=rngs,
                                       activation=act, std=config.actor_std)
        self.reward_critic = MLP(inputs, tuple(config.critic_hidden), 1, rngs=rngs, activation=act)
        self.cost_critic = MLP(inputs, tuple(config.critic_hidden), max(1, len(self.cost_terms)), rngs=rngs,
                               activation=act)
        self.init_multipliers()

    # ---- hooks --------------------------------------------------------------------------------

    def advantage(self, adv_r: jax.Array, adv_c: jax.Array, violation: jax.Array) -> jax.Array:
        """Penalty hook: the advantage fed to the clipped surrogate. Default: the rule's mix
        (:meth:`~crax.learners.shared.learner.Learner.mix`: (Â_r − λ Â_c)/(1 + λ) for the Lagrangian rules; Â_r without a rule)."""
        return self.mix(adv_r, adv_c)

    def policy_loss(self, batch: PolicyBatch) -> tuple[jax.Array, dict[str, jax.Array]]:
        """Penalty hook: the policy loss (to minimize) and extra metrics. Default: −clip surrogate
        (:func:`~crax.learners.on_policy.losses.clipped_surrogate`)."""
        adv = self.advantage(batch.adv_r, batch.adv_c, batch.violation)
        return -clipped_surrogate(batch.ratio, adv, self.config.clip_epsilon), {}

    def policy_update(self, optimizer: nnx.Optimizer, batch: IterationBatch, key: jax.Array) -> dict[str, jax.Array]:
        """Update hook: the actor's update of one iteration, in place; returns its metrics (each an
        array whose mean is logged). Default: PPO's ``num_epochs`` × ``num_minibatches`` optimizer
        steps on :meth:`ppo_loss`, the clipped surrogate of :meth:`policy_loss` together with the
        critics' :meth:`value_loss` (one optimizer, so gradient clipping spans actor and critics),
        the epochs stopped early by ``target_kl`` (:meth:`kl_early_stop`). An override that steps the actor otherwise regresses the critics with :meth:`fit_critics`."""
        violation = batch.violation
        metrics = self.minibatch_epochs(optimizer, batch.samples, key,
                                        lambda learner, mb: learner.ppo_loss(mb, violation),
                                        stop=self.kl_early_stop(batch.samples["obs"]))
        if "epochs" in metrics:  # with target_kl: the epochs that ran
            metrics["policy/epochs"] = metrics.pop("epochs")
        return metrics

    def kl_early_stop(self, obs: Any) -> Callable[[nnx.Module], jax.Array] | None:
        """The ``stop`` of :meth:`minibatch_epochs` for ``target_kl`` (None when it is None): whether the
        mean KL(π_start ‖ π_θ) at ``obs`` exceeds it, π_start the policy now (OmniSafe's
        ``PolicyGradient._update``: KL from the distribution before the epochs, summed over action
        dimensions, averaged over the whole batch, checked after each epoch)."""
        target = self.config.target_kl
        if target is None:
            return None
        start_loc, start_scale = jax.lax.stop_gradient(self.policy(obs))

        def stop(learner: nnx.Module) -> jax.Array:
            loc, scale = cast(ConstrainedPPO, learner).policy(obs)
            return mean_kl(start_loc, start_scale, loc, scale) > target

        return stop

    # ---- the update's pieces ------------------------------------------------------------------

    def minibatch_epochs(self, optimizer: nnx.Optimizer, samples: dict[str, jax.Array], key: jax.Array,
                         loss: Loss, module: nnx.Module | None = None,
                         stop: Callable[[nnx.Module], jax.Array] | None = None) -> dict[str, jax.Array]:
        """``num_epochs`` passes over ``samples`` in a fresh random order, one ``optimizer`` step on
        ``loss(module, minibatch)`` per minibatch (``num_minibatches`` per pass), by ``lax.scan``;
        ``module`` (default: this learner; e.g. its actor, with an optimizer of its own) and
        ``optimizer`` change in place. Returns the loss metrics stacked ``(epochs, minibatches)``.

        With ``stop``, checked on ``module`` after every pass, the passes after the first that it
        flags leave ``module`` and ``optimizer`` as they are; the metrics are then the means over the
        passes that ran, and ``epochs`` counts them."""
        c = self.config
        module = self if module is None else module
        n = observation.rows(samples["obs"])
        graphdef, state = nnx.split((module, optimizer))

        def sgd_step(state, mb):
            target, opt = nnx.merge(graphdef, state)
            (_, metrics), grads = nnx.value_and_grad(loss, has_aux=True)(target, mb)
            opt.update(target, grads)
            return nnx.state((target, opt)), metrics

        def epoch(state, k):
            perm = jax.random.permutation(k, n)
            mbs = jax.tree.map(lambda x: x[perm].reshape((c.num_minibatches, -1, *x.shape[1:])), samples)
            return jax.lax.scan(sgd_step, state, mbs)

        keys = jax.random.split(key, c.num_epochs)
        if stop is None:
            state, metrics = jax.lax.scan(epoch, state, keys)
            nnx.update((module, optimizer), state)
            return metrics

        # A while loop, not a masked scan: the epochs after the stop are not computed (under vmap over
        # seeds it runs until every seed has stopped, the stopped seeds' state kept by JAX's select).
        def cond(carry):
            _, stopped, i, _ = carry
            return ~stopped & (i < c.num_epochs)

        def body(carry):
            state, _, i, sums = carry
            state, metrics = epoch(state, keys[i])
            sums = jax.tree.map(lambda s, m: s + jnp.mean(m), sums, metrics)
            return state, stop(nnx.merge(graphdef, state)[0]), i + 1, sums

        sums = jax.tree.map(lambda m: jnp.zeros((), jnp.float32),
                            jax.eval_shape(lambda s: epoch(s, keys[0])[1], state))
        state, _, epochs, sums = jax.lax.while_loop(cond, body, (state, jnp.zeros((), bool), jnp.zeros((), jnp.int32), sums))
        nnx.update((module, optimizer), state)
        means = jax.tree.map(lambda s: s / jnp.maximum(epochs, 1), sums)
        return {**means, "epochs": epochs.astype(jnp.float32)}

    def value_loss(self, mb: dict[str, jax.Array]) -> tuple[jax.Array, dict[str, jax.Array]]:
        """The critics' regression loss, ``value_loss_coef`` × (MSE of the reward critic + summed MSE of
        the cost critic's outputs + ``critic_l2`` × their parameters' Σθ², the shared encoder's included)
        against the GAE targets, and its metrics; it alone trains the encoder. Its gradient is taken in
        chunks of ``critic_chunk`` rows (:func:`~crax.learners.shared.gradients.chunked_mean`)."""
        graphdef, params, rest = nnx.split(self._critic_nets(), nnx.Param, ...)
        coef, l2 = self.config.value_loss_coef, self.config.critic_l2

        def loss(params: nnx.State, b: dict[str, jax.Array]) -> tuple[jax.Array, dict[str, jax.Array]]:
            v_r, v_c = self._critics(nnx.merge(graphdef, params, rest), b["x"])
            loss, value_loss_r, value_loss_c = value_regression(v_r, v_c, b["target_r"], b["target_c"], coef, l2, params)
            return loss, {"loss/value_reward": value_loss_r, "loss/value_cost": value_loss_c}

        batch = {"x": self.normalize(mb["obs"]), "target_r": mb["target_r"], "target_c": mb["target_c"]}
        rows = observation.rows(mb["obs"])
        return chunked_mean(loss, params, batch, rows // self.config.critic_chunk_rows(rows))

    def fit_critics(self, optimizer: nnx.Optimizer, samples: dict[str, jax.Array], key: jax.Array) -> dict[str, jax.Array]:
        """The critics' regression alone: :meth:`minibatch_epochs` on :meth:`value_loss` (the actor's
        gradient is zero, so its parameters and its optimizer moments stay as they are)."""
        return self.minibatch_epochs(optimizer, samples, key, lambda learner, mb: learner.value_loss(mb))

    def ppo_loss(self, mb: dict[str, jax.Array], violation: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
        """PPO's minibatch loss: :meth:`policy_loss` + the critics' value loss − ``entropy_cost`` × entropy."""
        c = self.config
        loc, scale = self.policy(mb["obs"])
        ratio = self.probability_ratio(mb, loc, scale)
        kl = gaussian_kl(loc, scale, mb["loc"], mb["scale"])
        policy_loss, extra = self.policy_loss(
            PolicyBatch(ratio=ratio, adv_r=mb["adv_r"], adv_c=mb["adv_c"], kl=kl, violation=violation)
        )
        value_loss, value_metrics = self.value_loss(mb)
        entropy = mean_entropy(scale)
        loss = combined_loss(policy_loss, value_loss, entropy, c.entropy_cost)
        metrics = {
            "loss/total": loss,
            "loss/policy": policy_loss,
            **value_metrics,
            "policy/entropy": entropy,
            "policy/kl": jnp.mean(kl),
            "policy/clip_fraction": clip_fraction(ratio, c.clip_epsilon),
            **extra,
        }
        return loss, metrics

    # ---- shared pieces ------------------------------------------------------------------------

    def probability_ratio(self, mb: dict[str, jax.Array], loc: jax.Array, scale: jax.Array) -> jax.Array:
        """ρ of the minibatch's actions under the Gaussian ``(loc, scale)`` against the rollout's policy,
        one per sample (a multi-agent learner's: one per sample and agent)."""
        return probability_ratio(mb["u"], loc, scale, mb["logp"])

    def squash(self, u: jax.Array) -> jax.Array:
        return jnp.clip(u, -1.0, 1.0) if self.config.action_squash == "clip" else jnp.tanh(u)

    def values(self, obs: Any) -> tuple[jax.Array, jax.Array]:
        """Reward and cost values at raw observations (``obs``'s leading axes flattened and taken in chunks
        of ``critic_chunk`` rows, as the critics' gradient is: :func:`~crax.learners.shared.gradients.chunked_rows`)."""
        x = self.normalize(obs)
        rows = observation.rows(x)
        nets = self._critic_nets()
        return chunked_rows(lambda c: self._critics(nets, c), x, self.config.critic_chunk_rows(rows))

    def _critic_nets(self) -> tuple[Any, Any, Any]:
        """What the critics' values are computed by: the shared encoder (None on a flat observation), the
        reward critic and the cost critic."""
        return self.encoder, self.reward_critic, self.cost_critic

    def _critics(self, nets: tuple[Any, Any, Any], x: Any) -> tuple[jax.Array, jax.Array]:
        """Reward and cost values of ``nets`` (:meth:`_critic_nets`' layout) at normalized observations."""
        encoder, reward_critic, cost_critic = nets
        f = encoded(encoder, x)
        cost = cost_critic(f)
        return reward_critic(f)[..., 0], cost if self.cost_terms else cost[..., 0]
