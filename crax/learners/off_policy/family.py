"""`OffPolicyLearner`: the base of the off-policy family (SAC, DDPG and TD3 learners, with the shared
multiplier rules), and its config.

A learner holds the actor, one or two reward Q-networks (DDPG one, SAC and TD3 twins) and a cost
Q-network (one output per budgeted term), their target copies, the observation normalizer and the multiplier state
(on an observation with images, the critics hold the convolutional encoder the actor shares,
:mod:`crax.learners.shared.encoders`: the critics' optimizer trains it, their target copy's averaging moves
the target encoder, and the actor reads its features under ``stop_gradient``). Its trainer
(:class:`crax.learners.off_policy.trainer.OffPolicyTrainer`) steps hundreds of envs per seed, writes
their transitions into a replay buffer in device memory and takes ``updates_per_iteration``
gradient steps on batches drawn from it, all inside one jitted call. Algorithms override hooks:

* :meth:`OffPolicyLearner.target_action` (SAC: a sample of the policy and its log-probability;
  DDPG: the actor's action; TD3: the target actor's action with clipped smoothing noise),
  :meth:`OffPolicyLearner.entropy_bonus` and :meth:`OffPolicyLearner.deterministic_action` (where
  the cost target bootstraps, OmniSafe's choice for all three);
* :meth:`OffPolicyLearner.actor_loss` (SAC: −objective(min Q_r − α log π, Q_c); DDPG, TD3: −objective), where
  :meth:`OffPolicyLearner.objective` mixes the reward and cost Q-values (the shared multiplier
  rules' mix, :meth:`~crax.learners.shared.learner.Learner.mix`);
* :meth:`OffPolicyLearner.actor_due` (TD3's delayed actor), :meth:`OffPolicyLearner.extra_update`
  (SAC's temperature).

The constraint signal is the PPO family's: v = ĉ − d/T with ĉ the mean per-step cost of the
iteration's rollout, one multiplier step per iteration. The cost critic estimates the discounted
cost, bootstrapping from its target clipped at 0 (costs are never negative); the actor trades it
against the reward through the multiplier. The targets' and losses' arithmetic is pure functions in
:mod:`crax.learners.off_policy.losses`; ``tests/learners/test_omnisafe_off_policy.py`` checks the
targets, losses and gradients against OmniSafe 0.5's own code.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from crax.core.params import ranged
from crax.learners.off_policy.losses import cost_target, critic_losses, polyak, reward_target
from crax.learners.rules import LagrangianFields, PIDFields
from crax.learners.shared.config import ConstraintConfig, ObservationConfig, RunConfig
from crax.learners.shared.encoders import Encoder, encoded
from crax.learners.shared.learner import Learner
from crax.learners.shared.networks import MLP, Activation


@dataclasses.dataclass(frozen=True)
class OffPolicyConfig(ObservationConfig, ConstraintConfig, RunConfig):
    """The off-policy family's fields, after the run's and the constraint's.

    One iteration: each of ``num_envs`` envs per seed steps ``unroll_length`` times (``num_envs ·
    unroll_length`` transitions into the replay buffer), the multipliers step once, and
    ``updates_per_iteration`` gradient steps each draw ``batch_size`` transitions from the buffer.
    Updates start once the buffer holds ``learning_starts`` transitions; before that the envs act
    with unit-Gaussian random pre-squash actions.
    """

    checkpoint_every: int = ranged(200, ge=1, integer=True)
    """Write a checkpoint every this many iterations (and always at the end); the replay buffer is in it."""
    iterations_per_call: int = ranged(10, ge=1, integer=True)
    """Training iterations per compiled call (an off-policy iteration is short)."""
    actor_learning_rate: float = ranged(3e-4, gt=0)
    """Adam learning rate of the actor (and SAC's temperature)."""
    critic_learning_rate: float = ranged(3e-4, gt=0)
    """Adam learning rate of the reward and cost Q-networks."""
    discounting: float = ranged(0.99, ge=0, le=1)
    """Discount factor γ of reward and cost returns."""
    tau: float = ranged(0.005, gt=0, le=1)
    """Target networks move by target ← (1 − τ)·target + τ·online after each update."""
    reward_scaling: float = ranged(1.0, gt=0)
    """Multiplies rewards in the critics' targets (costs are never scaled)."""
    max_grad_norm: float | None = ranged(None, gt=0, optional=True)
    """Global gradient-norm clip of each network's update (> 0); None disables clipping."""
    actor_hidden: tuple[int, ...] = ranged((256, 256), ge=1, integer=True)
    """Hidden layer sizes of the actor."""
    critic_hidden: tuple[int, ...] = ranged((256, 256), ge=1, integer=True)
    """Hidden layer sizes of each Q-network."""
    activation: Activation = "swish"
    """The hidden layers' activation in the actor and the Q-networks (OmniSafe's off-policy baselines: relu)."""
    num_envs: int = ranged(256, ge=1, integer=True)
    """Parallel environments per seed."""
    unroll_length: int = ranged(4, ge=1, integer=True)
    """Consecutive steps each env runs per iteration."""
    batch_size: int = ranged(512, ge=1, integer=True)
    """Transitions per gradient step."""
    updates_per_iteration: int = ranged(16, ge=1, integer=True)
    """Gradient steps per iteration (the update-to-data ratio is this × batch_size / (num_envs × unroll_length));
    16 by measurement (docs/learners.md; docs/DECISIONS.md, decision 66)."""
    n_step: int = ranged(1, ge=1, integer=True)
    """n of the n-step returns (within an iteration's rollout: the last steps of it use fewer)."""
    buffer_size: int = ranged(1_000_000, ge=1, integer=True)
    """Replay buffer capacity in transitions, per seed (device memory: see ``crax train``'s estimate)."""
    learning_starts: int = ranged(10_000, ge=0, integer=True)
    """Transitions per seed in the buffer before the first gradient step (random actions until then)."""
    desync_episodes: bool = True
    """Start each training env at a random step of its first episode (as the PPO family does)."""

    def __post_init__(self) -> None:
        """The shared checks (every field against its range, the budgets), then the buffer's."""
        super().__post_init__()
        per_iteration = self.num_envs * self.unroll_length
        if self.buffer_size < self.batch_size:
            raise ValueError(f"buffer_size ({self.buffer_size:,}) is smaller than one batch (batch_size "
                             f"{self.batch_size:,}): raise --buffer-size or lower --batch-size")
        if self.buffer_size < per_iteration:
            raise ValueError(f"buffer_size ({self.buffer_size:,}) cannot hold one iteration's transitions "
                             f"(num_envs × unroll_length = {per_iteration:,}): raise --buffer-size")
        if self.n_step > self.unroll_length:
            raise ValueError(f"n_step ({self.n_step}) must be at most unroll_length ({self.unroll_length}): the "
                             "n-step returns are taken within an iteration's rollout")
        if self.learning_starts > self.buffer_size:
            raise ValueError(f"learning_starts ({self.learning_starts:,}) exceeds buffer_size "
                             f"({self.buffer_size:,}): updates would never start")

    @property
    def steps_per_iteration(self) -> int:
        """Environment steps per iteration and seed."""
        return self.num_envs * self.unroll_length


@dataclasses.dataclass(frozen=True)
class OffPolicyLagrangianFields(LagrangianFields):
    """The Lagrangian rule's fields with the off-policy family's step size."""

    lambda_lr: float = ranged(0.05, gt=0)
    """Step size η_λ of λ ← max(0, λ + η_λ v) per iteration. An off-policy iteration is short (1,024
    steps at the defaults, against the PPO family's 262,144), so the step is smaller than ppo-lag's 3.0."""


@dataclasses.dataclass(frozen=True)
class OffPolicyPIDFields(PIDFields):
    """The PID rule's fields with OmniSafe's SACPID/TD3PID gains in crax's units (docs/DECISIONS.md, decision 79).

    OmniSafe steps its PID once per env step (``update_cycle`` 1) on the episode cost; crax once per
    iteration of ``num_envs × unroll_length`` env steps (1,024 at the defaults) on T·ĉ. The integral
    adds K_i·e per step of the rule, so K_i is OmniSafe's 1e-7 × 1,024; K_p and K_d weigh an EMA and a
    difference, not a sum, and keep OmniSafe's values."""

    kp: float = ranged(1e-6, ge=0)
    """Proportional gain K_p (OmniSafe's SACPID/TD3PID ``pid_kp``)."""
    ki: float = ranged(1e-4, ge=0)
    """Integral gain K_i: OmniSafe's ``pid_ki`` 1e-7 per env step × 1,024 env steps per iteration
    (scale it with ``num_envs × unroll_length`` when changing those)."""
    kd: float = ranged(1e-7, ge=0)
    """Derivative gain K_d (OmniSafe's ``pid_kd``)."""


class Critics(nnx.Module):
    """One or two reward Q-networks (``reward_critics``: DDPG one, SAC and TD3 twins) and one cost
    Q-network (one output per budgeted term), on the normalized observation and the action.

    ``inputs`` is the size of what the Q-networks read of an observation: a flat observation's size, or
    ``encoder``'s features (on a structured observation: the learner's shared encoder, which the critics
    hold, so that their optimizer trains it and their target copy holds the target encoder)."""

    def __init__(self, inputs: int, action_size: int, hidden: tuple[int, ...], cost_outputs: int, *,
                 rngs: nnx.Rngs, reward_critics: int = 2, activation: Activation = "swish",
                 encoder: Encoder | None = None):
        if reward_critics not in (1, 2):
            raise ValueError(f"reward_critics must be 1 or 2, not {reward_critics}")
        self.encoder = encoder

        def q(outputs: int):
            return MLP(inputs + action_size, hidden, outputs, rngs=rngs, activation=activation)

        self.reward_q1 = q(1)
        if reward_critics == 2:
            self.reward_q2 = q(1)
        self.cost_q = q(cost_outputs)
        self.reward_critics = reward_critics

    def features(self, x: Any) -> Any:
        """What the Q-networks read at normalized observations: the encoder's features, or ``x``."""
        return encoded(self.encoder, x)

    def reward(self, x: Any, action: jax.Array) -> jax.Array:
        """The reward Q-values stacked ``(reward_critics, B)`` at normalized observations."""
        return self._reward(self.features(x), action)

    def _reward(self, f: Any, action: jax.Array) -> jax.Array:
        """The reward Q-values stacked ``(reward_critics, B)`` at features ``f``."""
        nets = [self.reward_q1, self.reward_q2] if self.reward_critics == 2 else [self.reward_q1]
        return jnp.stack([net(f, action)[..., 0] for net in nets])

    def cost(self, x: Any, action: jax.Array) -> jax.Array:
        """The cost Q-values ``(B, outputs)`` at normalized observations."""
        return self.cost_q(self.features(x), action)

    def __call__(self, x: Any, action: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(q_r, q_c)``: the reward values ``(reward_critics, B)`` and the cost values ``(B, outputs)``."""
        f = self.features(x)  # encoded once for both
        return self._reward(f, action), self.cost_q(f, action)


def standard_normal(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """Standard Gaussian noise: where the family's sampled actions and smoothing noise come from (the
    OmniSafe comparisons substitute OmniSafe's recorded draws here)."""
    return jax.random.normal(key, shape)


def soft_update(target: nnx.Module, online: nnx.Module, tau: float | jax.Array) -> None:
    """target ← (1 − τ)·target + τ·online, parameter by parameter, in place."""
    new = jax.tree.map(lambda t, o: polyak(t, o, tau), nnx.state(target, nnx.Param), nnx.state(online, nnx.Param))
    nnx.update(target, new)


def value_and_grad(loss, module: nnx.Module, *args):
    """``((loss, metrics), grads)`` of ``loss(module, *args)`` with respect to ``module``'s parameters
    (everything else the loss reads is a constant)."""
    graphdef, params, rest = nnx.split(module, nnx.Param, ...)
    return jax.value_and_grad(lambda p: loss(nnx.merge(graphdef, p, rest), *args), has_aux=True)(params)


def optimizer(learning_rate: float, max_grad_norm: float | None) -> optax.GradientTransformation:
    """Adam at ``learning_rate``, after global-norm clipping by ``max_grad_norm`` if set."""
    tx = optax.adam(learning_rate)
    return tx if max_grad_norm is None else optax.chain(optax.clip_by_global_norm(max_grad_norm), tx)


class OffPolicyLearner(Learner, name="off-policy", config=OffPolicyConfig):
    """Actor, twin reward critics, cost critic, their targets, normalizer and multipliers, plus hooks.

    Subclasses (:class:`crax.learners.off_policy.sac.SAC`, :class:`crax.learners.off_policy.ddpg.DDPG`,
    :class:`crax.learners.off_policy.td3.TD3`) build the actor (:meth:`build_actor`) and override the algorithm hooks; constrained learners add a multiplier
    rule as ``Rule`` (``class SACLag(SAC): Rule = LagrangianRule``).
    """

    config: OffPolicyConfig
    optimized: ClassVar[tuple[str, ...]] = ("actor", "critics")
    """The parts with an optimizer of their own (attribute names)."""
    critic_parts: ClassVar[tuple[str, ...]] = ("critics",)
    """The parts of :attr:`optimized` that step at ``critic_learning_rate`` (the others at the actor's)."""
    reward_critics: ClassVar[int] = 2
    """How many reward Q-networks (1: DDPG; 2: twins whose minimum the targets take)."""
    actor: nnx.Module
    critics: Critics
    target_critics: Critics

    def __init__(self, config: OffPolicyConfig, observation_spec: Any, action_size: int, episode_length: int, *,
                 rngs: nnx.Rngs):
        """``observation_spec``: one observation's shapes (:attr:`crax.core.env.Env.observation_spec`), or a
        flat observation's size. On a structured observation the critics hold the encoder the actor shares."""
        self.setup_constraint(config, observation_spec, episode_length)
        self.action_size = action_size
        inputs = self.network_inputs(observation_spec)
        self.build_actor(inputs, action_size, rngs)
        hidden = tuple(config.critic_hidden)
        cost_outputs = max(1, len(self.cost_terms))
        self.critics = Critics(inputs, action_size, hidden, cost_outputs, rngs=rngs,
                               reward_critics=self.reward_critics, activation=config.activation,
                               encoder=self.build_encoder(observation_spec, rngs))
        self.target_critics = nnx.clone(self.critics)
        self.init_multipliers()

    def build_actor(self, inputs: int, action_size: int, rngs: nnx.Rngs) -> None:
        """Creates ``self.actor`` (and any target of it) on ``inputs`` features
        (:meth:`~crax.learners.shared.learner.Learner.actor_features`: a flat observation, or the shared
        encoder's features)."""
        raise NotImplementedError

    @property
    def feature_encoder(self) -> Encoder | None:
        """The shared encoder: the online critics'."""
        return self.critics.encoder

    def optimizers(self) -> nnx.Dict:
        """One Adam per part in :attr:`optimized` (actor and SAC's temperature at the actor's rate)."""
        c = self.config
        rate = lambda part: c.critic_learning_rate if part in self.critic_parts else c.actor_learning_rate  # noqa: E731
        return nnx.Dict({part: nnx.Optimizer(getattr(self, part), optimizer(rate(part), c.max_grad_norm), wrt=nnx.Param)
                         for part in self.optimized})

    # ---- hooks --------------------------------------------------------------------------------

    def objective(self, q_r: jax.Array, q_c: jax.Array) -> jax.Array:
        """Penalty hook: what the actor maximizes from the reward Q ``(B,)`` and cost Q ``(B, outputs)``.
        Default: the rule's mix (:meth:`~crax.learners.shared.learner.Learner.mix`; q_r without a rule)."""
        return self.mix(q_r, q_c)

    def target_action(self, x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The action of the critics' targets at normalized next observations, and its log-probability
        (zeros where the algorithm has none)."""
        raise NotImplementedError

    def deterministic_action(self, x: jax.Array) -> jax.Array:
        """The online actor's deterministic action at normalized observations (tanh of its mean)."""
        raise NotImplementedError

    def cost_action(self, x_next: jax.Array, a_next: jax.Array) -> jax.Array:
        """Where the cost target bootstraps at normalized next observations, given the reward target's
        action ``a_next``. Default: the online actor's :meth:`deterministic_action` (OmniSafe's one cost
        update for all three, docs/DECISIONS.md, decision 79); WCSAC: ``a_next``, a sample of the policy."""
        return self.deterministic_action(x_next)

    def entropy_bonus(self, logp: jax.Array) -> jax.Array:
        """What the reward target adds to min Q at the target action (SAC: −α log π). Default: 0."""
        return jnp.zeros_like(logp)

    def actor_loss(self, actor: nnx.Module, x: jax.Array, key: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
        """The loss of ``actor`` (this learner's actor, or the copy the gradient is taken of) on a batch of
        normalized observations, and its metrics."""
        raise NotImplementedError

    def actor_due(self, step: jax.Array) -> jax.Array:
        """Whether gradient step ``step`` (counted per iteration from 0) updates the actor and the
        targets. Default: every step."""
        return jnp.ones((), bool)

    def extra_update(self, optimizers: nnx.Dict, x: jax.Array, key: jax.Array) -> dict[str, jax.Array]:
        """Update hook after the actor's step (SAC's temperature); returns metrics. Default: none."""
        return {}

    # ---- the update ---------------------------------------------------------------------------

    def targets(self, batch: dict[str, jax.Array], key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The critics' regression targets ``y_r = s·r + d·(min Q'_r(s', a') + bonus)`` and
        ``y_c = c + d·max(Q'_c(s', μ(s')), 0)``, d the stored discount (γ^k, 0 after a termination),
        a' the :meth:`target_action` and μ(s') the :meth:`cost_action` (the online actor's :meth:`deterministic_action`)
        (:func:`~crax.learners.off_policy.losses.reward_target`, :func:`~crax.learners.off_policy.losses.cost_target`)."""
        x_next = self.normalize(batch["next_obs"])
        a_next, logp = self.target_action(x_next, key)
        q_r = self.target_critics.reward(x_next, a_next)
        bonus = self.entropy_bonus(logp)
        # OmniSafe's DDPG, TD3 and SAC share one cost update: the target critic at the online actor's
        # deterministic action, with neither smoothing noise nor a sample (docs/DECISIONS.md, decision 79)
        q_c = self.target_critics.cost(x_next, self.cost_action(x_next, a_next))
        y_r = reward_target(batch["reward"], batch["discount"], q_r, bonus, self.config.reward_scaling)
        y_c = cost_target(batch["cost"], batch["discount"], q_c)  # bootstraps from max(Q'_c, 0): a cost return is never negative (docs/DECISIONS.md, decision 68)
        return jax.lax.stop_gradient(y_r), jax.lax.stop_gradient(y_c)

    def critic_loss(self, critics: Critics, x: jax.Array, action: jax.Array, y_r: jax.Array,
                    y_c: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
        """Mean squared TD errors of both reward twins and of the cost critic's outputs."""
        q_r, q_c = critics(x, action)
        loss_r, loss_c = critic_losses(q_r, q_c, y_r, y_c)
        return loss_r + loss_c, {"loss/critic_reward": loss_r, "loss/critic_cost": loss_c,
                                 "q/reward": q_r.mean(), "q/cost": q_c.mean()}

    def update(self, optimizers: nnx.Dict, batch: dict[str, jax.Array], key: jax.Array,
               step: jax.Array) -> dict[str, jax.Array]:
        """One gradient step on a batch from the buffer, in place: the critics, then (when
        :meth:`actor_due`) the actor, :meth:`extra_update` and the targets' soft update."""
        k_target, k_actor, k_extra = jax.random.split(key, 3)
        x = self.normalize(batch["obs"])
        y_r, y_c = self.targets(batch, k_target)
        (_, metrics), grads = value_and_grad(self.critic_loss, self.critics, x, batch["action"], y_r, y_c)
        optimizers["critics"].update(self.critics, grads)

        graphdef, state = nnx.split((self, optimizers))

        def actor_step(state):
            learner, optimizers = nnx.merge(graphdef, state)
            (_, actor_metrics), grads = value_and_grad(learner.actor_loss, learner.actor, x, k_actor)
            optimizers["actor"].update(learner.actor, grads)
            actor_metrics.update(learner.extra_update(optimizers, x, k_extra))
            learner.update_targets()
            return nnx.state((learner, optimizers)), actor_metrics

        def hold(state):  # a step that is not due: the same metrics, from the actor's loss alone
            learner, _ = nnx.merge(graphdef, state)
            _, actor_metrics = learner.actor_loss(learner.actor, x, k_actor)
            extra = jax.eval_shape(actor_step, state)[1]
            return state, {k: actor_metrics.get(k, jnp.zeros(v.shape, v.dtype)) for k, v in extra.items()}

        # a conditional, not a select of both: a step that is not due (TD3's delay) skips the actor's
        # gradient, its optimizer and the targets' update
        state, actor_metrics = jax.lax.cond(self.actor_due(step), actor_step, hold, state)
        nnx.update((self, optimizers), state)
        return {**metrics, **actor_metrics}

    def target_pairs(self) -> list[tuple[nnx.Module, nnx.Module]]:
        """(target, online) pairs that :meth:`update_targets` moves: the critics' (TD3 adds its actor's)."""
        return [(self.target_critics, self.critics)]

    def update_targets(self) -> None:
        """The target networks' soft update by τ."""
        for target, online in self.target_pairs():
            soft_update(target, online, self.config.tau)
