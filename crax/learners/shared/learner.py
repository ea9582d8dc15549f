"""`Learner`: what every learner family shares, whatever its update (PPO's epochs, a trust-region
step, off-policy Q-learning).

A learner is an ``nnx.Module`` holding its networks, its observation normalizer and its constraint
rule (``self.rule``, a :class:`~crax.learners.rules.ConstraintRule` built from the class's ``Rule``:
the Lagrangian rule, the PID Lagrangian, Simmer's budget controller...). This base holds the parts
every family uses the same way:

* the constraint: ``cost_terms`` and ``cost_shape`` (one summed cost, or one entry per budgeted
  term), the per-step violation v = ĉ − d/T (:meth:`Learner.violation`, :meth:`Learner.rollout_violation`);
* the rule: built by :meth:`Learner.init_multipliers`, stepped by :meth:`Learner.multiplier_update`
  once per training iteration with v, mixed into the loss by :meth:`Learner.mix`, logged by
  :meth:`Learner.multipliers`;
* environment hooks :meth:`Learner.wrap_env` and :meth:`Learner.training_reward`, and
  :meth:`Learner.learner_env`, the env the learner sees (``wrap_env``, then ``frame_stack``'s stacking);
* observations: flat, or a dict of the state vector and images (:mod:`crax.core.observation`); the
  normalizer standardizes the state vector alone (:meth:`Learner.normalize`); one encoder shared by the
  actor and the critics turns a structured observation into features (:meth:`Learner.build_encoder`,
  :meth:`Learner.encode`; the actor reads them under ``stop_gradient``, :meth:`Learner.actor_input`;
  :mod:`crax.learners.shared.encoders`);
* acting: :meth:`Learner.policy` gives the location and scale of the pre-squash Gaussian at raw
  observations; the env receives :meth:`Learner.env_action` of ``loc + scale·ε`` (sampled) or of ``loc``
  (deterministic): :meth:`Learner.squash` (``tanh``, or a clip for the PPO family's
  ``action_squash="clip"``), then the rule's :meth:`~crax.learners.rules.ConstraintRule.act`.
  Evaluation, ``load_policy`` and videos act through it alone, for every family.

Families: :class:`crax.learners.on_policy.family.ConstrainedPPO` (PPO and trust-region learners) and
:class:`crax.learners.off_policy.family.OffPolicyLearner` (SAC, DDPG and TD3 learners). Which trainer runs a
family is :func:`crax.learners.families.make_trainer`'s table.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core import observation
from crax.core.env import Env
from crax.learners.rules.rule import ConstraintRule, ControllerState, Multiplier, logged_values
from crax.learners.shared import risk
from crax.learners.shared.config import RunConfig
from crax.learners.shared.encoders import Encoder, encoded, feature_size, observation_spec
from crax.learners.shared.frame_stack import FrameStack
from crax.learners.shared.networks import Normalizer

__all__ = ["ControllerState", "Learner", "Multiplier"]


class Learner(nnx.Module):
    """The family-neutral part of a learner: constraint, multipliers, normalizer, env hooks, acting.

    A family's base class calls :meth:`setup_constraint` in its ``__init__``, builds its networks,
    and then calls :meth:`init_multipliers`. A subclass says what it is in its class statement
    (:meth:`__init_subclass__`): ``class PPOLag(ConstrainedPPO, name="ppo-lag", config=PPOLagConfig,
    rule=LagrangianRule, budgets=True)``; a constrained learner's config lists its rule's field group
    among its bases.
    """

    name: ClassVar[str] = "learner"
    Config: ClassVar[type[Any]] = RunConfig
    Rule: ClassVar[type[ConstraintRule] | None] = None
    """The constraint rule the learner is composed of (None: no rule, the cost is not weighed)."""
    supports_budgets: ClassVar[bool] = False
    """Whether the hooks handle per-term budgets (a cost signal, violation and multipliers of shape (K,))."""
    multi_agent: ClassVar[bool] = False
    """Whether the learner trains on a multi-agent env (:mod:`crax.core.multi_agent`) rather than a single-agent one."""
    reads_bound: ClassVar[bool] = True
    """Whether training depends on ``safety_bound`` (False for learners that read neither it nor
    ``budgets``): a sweep then trains the learner once per env, and the summary table judges that
    one run against every bound of the env."""

    config: Any
    rule: ConstraintRule | None
    episode_length: int
    cost_terms: tuple[str, ...]
    cost_shape: tuple[int, ...]
    normalizer: Normalizer
    actor: Any
    """The policy network a family builds (on :meth:`actor_input`'s features)."""

    def __init_subclass__(cls, *, name: str | None = None, config: type[Any] | None = None,
                          rule: type[ConstraintRule] | None = None, budgets: bool | None = None,
                          reads_bound: bool | None = None, **kwargs: Any) -> None:
        """Sets the class attributes a learner declares as class keywords: ``name``, ``config``
        (:attr:`Config`), ``rule`` (:attr:`Rule`), ``budgets`` (:attr:`supports_budgets`) and
        ``reads_bound``; what a subclass leaves out it inherits. Keywords rather than a factory keep every
        learner a greppable, typed ``class`` statement (docs/DECISIONS.md, decision 86)."""
        super().__init_subclass__(**kwargs)
        declared = {"name": name, "Config": config, "Rule": rule, "supports_budgets": budgets, "reads_bound": reads_bound}
        for attribute, value in declared.items():
            if value is not None:
                setattr(cls, attribute, value)

    @staticmethod
    def taking_budgets() -> list[str]:
        """Names of the loaded learner classes (every family) whose hooks handle per-term budgets,
        sorted (the valid choices an error about ``budgets`` names)."""
        return Learner._loaded(lambda cls: cls.supports_budgets)

    @classmethod
    def constraint_kinds(cls) -> tuple[str, ...]:
        """The ``constraint_kind`` values the learner trains under: its rule's (only ``expected`` without one)."""
        return cls.Rule.constraint_kinds if cls.Rule is not None else ("expected",)

    @staticmethod
    def taking_kind(kind: str) -> list[str]:
        """Names of the loaded learner classes that train under ``constraint_kind=kind``, sorted."""
        return Learner._loaded(lambda cls: kind in cls.constraint_kinds())

    @staticmethod
    def _loaded(test: Any) -> list[str]:
        classes, names = [Learner], set()
        while classes:
            cls = classes.pop()
            classes.extend(cls.__subclasses__())
            if test(cls):
                names.add(cls.name)
        return sorted(names)

    def setup_constraint(self, config: Any, observation_or_size: Any, episode_length: int) -> None:
        """Stores the config and the episode length, the budgeted terms and the cost shape, and the
        observation normalizer (of the state vector: ``observation_or_size`` is a flat observation's size
        or an observation spec, :attr:`crax.core.env.Env.observation_spec`)."""
        self.config = config
        self.episode_length = int(episode_length)
        bounds = config.budget_bounds
        self.cost_terms = tuple(bounds)
        """The budgeted cost terms, one cost-value output and multiplier entry each (empty: the summed cost)."""
        self.cost_shape = (len(bounds),) if bounds else ()
        """Shape of the cost signal, its violation and every multiplier: ``()`` or ``(K,)``."""
        state_size = observation.state_size(observation_spec(observation_or_size))
        self.normalizer = Normalizer(state_size, clip=config.observation_clip)
        self.rule = nnx.data(None)  # built by init_multipliers (a learner that overrides it without super() keeps none)
        if config.reads_episode_window:
            self.episode_costs = ControllerState(jnp.zeros((config.cost_window, *self.cost_shape), jnp.float32))
            self.episodes_seen = ControllerState(jnp.zeros((), jnp.int32))

    # ---- hooks --------------------------------------------------------------------------------

    @classmethod
    def configure(cls, config: Any, env: Env) -> Any:
        """Config hook: the config the learner trains with on ``env`` (the env as given, before any
        wrapper). Default: ``config`` itself; a learner whose networks take their shape from the env
        (the multi-agent ones: agents and their rows) fills those fields here. Must be idempotent (a
        resumed run's saved config passes through it again)."""
        return config

    @classmethod
    def wrap_env(cls, env: Env, config: Any) -> Env:
        """Environment hook: wraps the single (unbatched, episode-tracked) env. Default: the rule's
        wrapper (:meth:`~crax.learners.rules.ConstraintRule.wrap_env`; unchanged without a rule)."""
        return cls.Rule.wrap_env(env, config) if cls.Rule is not None else env

    @classmethod
    def learner_env(cls, env: Env, config: Any) -> Env:
        """The env the learner trains and is evaluated on, from the single episode-tracked env: its
        :meth:`wrap_env`, then, with ``frame_stack`` k > 1, a :class:`~crax.learners.shared.frame_stack.FrameStack`
        of the last k images of each camera (applied here, after any learner's own ``wrap_env``, so that
        every learner stacks alike)."""
        env = cls.wrap_env(env, config)
        k = getattr(config, "frame_stack", 1)
        return FrameStack(env, k) if k > 1 else env

    def training_reward(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        """Environment hook: the reward the learner optimizes (before reward scaling)."""
        return reward

    def init_multipliers(self) -> None:
        """Builds ``self.rule`` from the class's ``Rule`` (called by the family's ``__init__``)."""
        self.rule = self.Rule(self.config, self.cost_shape, self.episode_length) if self.Rule is not None else None

    def multiplier_update(self, violation: jax.Array) -> None:
        """Multiplier hook: steps the rule from v = ĉ − d/T (shape :attr:`cost_shape`) and the bound,
        once per iteration."""
        if self.rule is not None:
            self.rule.update(violation, self.bound())

    def mix(self, reward: jax.Array, cost: jax.Array) -> jax.Array:
        """What the actor maximizes from a reward and a cost quantity (advantages or Q-values): the
        rule's mix (the Lagrangian rules: (r − λ c)/(1 + λ)), the reward without a rule."""
        return self.rule.mix(reward, cost) if self.rule is not None else reward

    def policy(self, obs: Any) -> tuple[jax.Array, jax.Array]:
        """Location and scale of the pre-squash Gaussian at raw observations: the actor's at
        :meth:`actor_input` (a learner whose actor gives no scale, DDPG's, overrides it)."""
        return self.actor(self.actor_input(obs))

    def squash(self, u: jax.Array) -> jax.Array:
        """The action in [−1, 1] for the pre-squash action ``u``: ``tanh(u)`` (a family may clip instead)."""
        return jnp.tanh(u)

    def env_action(self, u: jax.Array) -> jax.Array:
        """The env's action for the pre-squash action ``u``: :meth:`squash`, then the rule's
        :meth:`~crax.learners.rules.ConstraintRule.act`. Training, evaluation, ``load_policy`` and videos
        act through it alone."""
        action = self.squash(u)
        return self.rule.act(action) if self.rule is not None else action

    # ---- shared pieces ------------------------------------------------------------------------

    def multipliers(self) -> dict[str, jax.Array]:
        """The rule's logged values by name, and any :class:`Multiplier` the learner keeps itself (for logging)."""
        return {**(self.rule.values() if self.rule is not None else {}), **logged_values(self)}

    def penalty(self, variable: Multiplier) -> jax.Array:
        """A multiplier's value as a constant of the loss."""
        return jax.lax.stop_gradient(variable[...])

    def normalize(self, obs: Any) -> Any:
        """The observation the encoder (or, on a flat observation, the networks) takes: the state vector
        standardized by the running normalizer (with ``normalize_observations``), any images as they are
        (the encoder scales them)."""
        if not self.config.normalize_observations:
            return obs
        if observation.is_structured(obs):
            return {**obs, observation.STATE: self.normalizer(obs[observation.STATE])}
        return self.normalizer(obs)

    def update_normalizer(self, obs: Any) -> None:
        """Folds a batch of raw observations (any leading axes) into the normalizer's statistics: of the
        state vector alone (images are scaled, not standardized)."""
        self.normalizer.update(observation.state(obs))

    def network_inputs(self, observation_or_size: Any) -> int:
        """The size of what the actor and the critics read for observations of ``observation_or_size``
        (a spec, or a flat observation's size): the encoder's features on a structured observation, the
        observation's size on a flat one (:func:`~crax.learners.shared.encoders.feature_size`)."""
        return feature_size(observation_or_size, getattr(self.config, "encoder_features", 256))

    def build_encoder(self, observation_or_size: Any, rngs: nnx.Rngs) -> Encoder | None:
        """The encoder the actor and the critics share on a structured observation (torso ``encoder``,
        ``encoder_features`` per image, from the config); None on a flat one (no parameters drawn from
        ``rngs``, so a flat observation's networks keep their numbers)."""
        spec = observation_spec(observation_or_size)
        if not observation.is_structured(spec):
            return None
        return Encoder(spec, getattr(self.config, "encoder", "nature"), getattr(self.config, "encoder_features", 256),
                       rngs=rngs)

    @property
    def feature_encoder(self) -> Encoder | None:
        """The shared encoder (None on a flat observation): the learner's ``encoder`` attribute; the
        off-policy family's critics hold it, with its target copy."""
        return getattr(self, "encoder", None)

    def encode(self, x: Any) -> Any:
        """The features the networks read at normalized observations ``x``: the shared encoder's, or ``x``
        itself on a flat observation. Gradients reach the encoder through them (the critics' losses)."""
        return encoded(self.feature_encoder, x)

    def actor_features(self, x: Any) -> Any:
        """What the actor reads at normalized observations ``x``: :meth:`encode` under ``stop_gradient``
        (the actor's losses do not train the shared encoder)."""
        return jax.lax.stop_gradient(self.encode(x))

    def actor_input(self, obs: Any) -> Any:
        """What the actor reads at raw observations: :meth:`actor_features` of :meth:`normalize`."""
        return self.actor_features(self.normalize(obs))

    def bound(self) -> jax.Array:
        """The episodic budget d (per budgeted term: shape :attr:`cost_shape`)."""
        bounds = self.config.budget_bounds
        return jnp.asarray(list(bounds.values()) if bounds else self.config.safety_bound, jnp.float32)

    def violation(self, mean_step_cost: jax.Array) -> jax.Array:
        """Per-step constraint violation v = ĉ − d/T (per budgeted term: shape :attr:`cost_shape`)."""
        return mean_step_cost - self.bound() / self.episode_length

    def rollout_violation(self, cost: jax.Array, episode_cost: jax.Array, done: jax.Array) -> jax.Array:
        """The iteration's v = ĉ − d/T from its rollout: ``cost`` the per-step cost signal ``(T, N, *cost_shape)``,
        ``episode_cost`` the finished episodes' costs where ``done`` ``(T, N)`` flags an episode's end.

        With ``cost_signal="rollout"`` ĉ is the rollout's mean step cost. With ``"episodes"`` the finished
        episodes enter a window of the last ``cost_window`` (in place, the latest kept when more end at
        once) and ĉ is the window's mean episode cost / T, OmniSafe's ``EpCost`` signal; the rollout's
        while no episode has finished.

        ``constraint_kind`` ``chance`` and ``cvar`` read that window whatever ``cost_signal`` is:
        ``cvar`` takes CVaR_α of the window's episode costs for its mean (v = CVaR_α/T − d/T), ``chance``
        the excess of the fraction of episodes over d, v = (P̂(C > d) − δ)·d/T: in units of the bound, so
        that a multiplier's learning rate means for it what it means for the expected cost. ``statewise``
        is given each episode's largest step cost as ``episode_cost``: v = their window mean − w
        (``step_bound``); before an episode ends, each env's largest step cost in the rollout."""
        mean_step_cost = cost.mean(axis=(0, 1))
        if not self.config.reads_episode_window:
            return self.violation(mean_step_cost)
        kind = self.config.constraint_kind
        window = self.config.cost_window
        ended = done.reshape(-1) > 0
        costs = episode_cost.reshape((-1, *self.cost_shape))
        from_end = jnp.cumsum(ended[::-1])[::-1]  # episodes ending at or after each row
        keep = ended & (from_end <= window)
        seen = self.episodes_seen[...]
        slot = jnp.where(keep, (seen + jnp.cumsum(keep) - 1) % window, window)  # window: dropped
        self.episode_costs[...] = self.episode_costs[...].at[slot].set(costs, mode="drop")
        seen = seen + keep.sum()
        self.episodes_seen[...] = seen
        filled = jnp.minimum(seen, window)
        costs, counted = self.episode_costs[...], jnp.arange(window) < filled
        bound = self.bound()
        if kind == "statewise":  # episode_cost holds each episode's largest step cost
            windowed = risk.masked_mean(costs, counted) - self.config.step_bound
            return jnp.where(filled > 0, windowed, cost.max(axis=0).mean() - self.config.step_bound)
        if kind == "chance":
            excess = risk.exceedance(costs, bound, counted) - self.config.violation_probability
            windowed = excess * bound / self.episode_length
        else:
            stat = risk.cvar(costs, self.config.cvar_alpha, counted) if kind == "cvar" else risk.masked_mean(costs, counted)
            windowed = self.violation(stat / self.episode_length)
        return jnp.where(filled > 0, windowed, self.violation(mean_step_cost))

    def multiplier_init(self, value: float) -> Multiplier:
        """A multiplier of the cost signal's shape (one entry per budgeted term), filled with ``value``."""
        return Multiplier(jnp.full(self.cost_shape, value, jnp.float32))
