"""A safety layer (Dalal et al. 2018, "Safe Exploration in Continuous Action Spaces"): a learned linear
model of the next step's cost that projects every action onto the actions it predicts safe (issue 64).

The model is ĉ(s') = c(s) + g(s)ᵀa, with c(s) the cost of the step that led to s and g an MLP of the
state (:class:`CostModel`). It is fitted once, before training, on a phase of uniformly random
exploration of a batched copy of the env (:func:`pretrain`), and then corrects every action: with one
constraint (crax's summed cost) the projection onto ``{a : c(s) + g(s)ᵀa ≤ C}`` has the closed form
(:func:`correct`)

    λ* = max(0, (g(s)ᵀa + c(s) − C) / (g(s)ᵀg(s))),    a* = clip(a − λ* g(s), −1, 1).

Like the shield (:mod:`crax.learners.shared.shield`) it wraps the env, not the policy
(:class:`SafetyLayer`), so it filters any learner's actions, in training and in evaluation alike: it is
part of the deployed policy. ``--safety-layer-steps`` turns it on for every learner
(:class:`~crax.learners.shared.config.ConstraintConfig`).

The bound C (``safety_layer_bound``, default 0.5). Safety-Gymnasium's costs are indicators (1 on a step
inside a hazard, 0 elsewhere), so a least-squares fit of c(s') makes ĉ(s') roughly the probability that
the next step costs, and C = 0.5 acts where the model predicts a costly next step more likely than not:
outside a hazard (c(s) = 0) it cuts the part of an action heading in beyond even odds, inside one
(c(s) = 1) it pushes every action out (along −g). C = 0 would demand a predicted cost of zero: outside a
hazard every action with gᵀa > 0 would be projected, including the many far from any hazard where the
fitted g is a small noise, whose direction the projection would strip from the action whatever its
size (|a* − a| = gᵀa / |g|), and inside one no action satisfies it (the projection lands on the box's
edge). Env-specific: a cost of another scale wants its own C.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from crax.core import observation
from crax.core.env import AutoReset, Env, EpisodeStats, State, Vmap, Wrapper, under_episode_stats
from crax.learners.shared.config import ConstraintConfig
from crax.learners.shared.networks import MLP, NormalizerStat

COST = "safety_layer_cost"
"""``state.info``'s entry holding c(s): the cost of the step that led to the state (the reset's at a reset)."""

METRICS = ("safety_layer/intervened", "safety_layer/correction", "safety_layer/fit_loss",
           "safety_layer/fit_baseline_loss")
"""The metrics a step through a :class:`SafetyLayer` adds: 1 where the action moved; |a* − a| (L2); and, the
same on every step, the pre-training's fit (:class:`FitReport`'s ``loss`` and ``baseline_loss``), so that a
run's log carries them."""

EPS = 1e-8
"""The least gᵀg the correction divides by (a zero g then moves no action)."""

_STREAM = 0x5AFE
"""Folded into the key :func:`pretrain` is given, so that its draws differ from the training's of the same key."""


def correct(g: jax.Array, action: jax.Array, cost: jax.Array, bound: float | jax.Array) -> tuple[jax.Array, jax.Array]:
    """The safety layer's correction of ``action`` (shape ``(..., A)``) under the linear model
    ``ĉ = cost + gᵀa`` and the bound ``C``: ``(a*, λ*)`` with ``λ* = max(0, (gᵀa + cost − C) / gᵀg)`` and
    ``a* = clip(a − λ* g, −1, 1)``, the projection of ``a`` onto ``{a : cost + gᵀa ≤ C}`` (then onto the
    action box). An action the model predicts within the bound gets λ* = 0 and is only clipped."""
    g = jnp.asarray(g, jnp.float32)
    a = jnp.asarray(action, jnp.float32)
    excess = cost + jnp.sum(g * a, axis=-1) - bound
    lam = jnp.maximum(excess, 0.0) / jnp.maximum(jnp.sum(g * g, axis=-1), EPS)
    return jnp.clip(a - lam[..., None] * g, -1.0, 1.0), lam


class CostModel(nnx.Module):
    """g(s) of the linear cost model ``ĉ(s') = c(s) + g(s)ᵀa``: an :class:`~crax.learners.shared.networks.MLP`
    of the flat state vector (:func:`crax.core.observation.state`, so that a dict observation works),
    standardized by the exploration data's fixed mean and standard deviation (clipped to ±10). With
    ``hidden=()`` g is affine in the state. Called on a batch of states (any leading axes) or on one."""

    def __init__(self, state_size: int, action_size: int, hidden: tuple[int, ...] = (64, 64), *, rngs: nnx.Rngs):
        self.mean = NormalizerStat(jnp.zeros((state_size,), jnp.float32))
        self.std = NormalizerStat(jnp.ones((state_size,), jnp.float32))
        self.net = MLP(state_size, tuple(hidden), action_size, rngs=rngs, final_scale=0.1)

    def __call__(self, obs: Any) -> jax.Array:
        x = jnp.asarray(observation.state(obs), jnp.float32)
        return self.net(jnp.clip((x - self.mean[...]) / self.std[...], -10.0, 10.0))


@dataclasses.dataclass(frozen=True)
class FitReport:
    """How well the pre-training fitted the cost model, to judge it by.

    Attributes:
      transitions: exploration transitions (s, a, c(s), c(s')) it fitted.
      loss: the fitted model's mean squared error of ĉ(s') = c(s) + g(s)ᵀa against c(s'), over them.
      baseline_loss: the same of the model g = 0 (ĉ(s') = c(s): "the cost stays"), which a model that
        learned anything beats; their ratio is the fraction of the cost's change left unexplained.
      cost_rate: the fraction of the transitions whose step cost (c(s') > 0).
    """

    transitions: int
    loss: float
    baseline_loss: float
    cost_rate: float


class CostMemory(Wrapper):
    """Keeps c(s), the cost of the step that led to the state, in ``state.info["safety_layer_cost"]`` (the
    reset's cost at a reset, which an :class:`~crax.core.env.AutoReset` swaps in with the new episode)."""

    def reset(self, key: jax.Array) -> State:
        state = self.env.reset(key)
        return state.replace(info={**state.info, COST: jnp.asarray(state.cost, jnp.float32)})

    def step(self, state: State, action: jax.Array) -> State:
        state = self.env.step(state, action)
        return state.replace(info={**state.info, COST: jnp.asarray(state.cost, jnp.float32)})


class SafetyLayer(CostMemory):
    """Corrects every action by the linear cost model (:func:`correct`), for one unbatched env.

    On ``step(state, action)`` it reads g(s) of ``state.obs`` from ``model`` and c(s) from
    ``state.info["safety_layer_cost"]``, and steps the env with a* where the action moved (with the action
    as given elsewhere: a step the model lets through is the unwrapped env's step). The reward, cost and
    done are those of the real step with a*. ``metrics["safety_layer/intervened"]`` is 1 where the action
    moved, ``metrics["safety_layer/correction"]`` |a* − a| (L2), and ``safety_layer/fit_loss`` and
    ``safety_layer/fit_baseline_loss`` the pre-training's fit (constants; NaN without a ``report``). The
    model's parameters are constants of the compiled step, shared by every env and seed.

    Cost: one evaluation of g per step. It steps the env once, under no vmap of its own, so it runs on any
    physics. Put it under :class:`~crax.core.env.EpisodeStats` (:func:`safety_layer` does).
    """

    def __init__(self, env: Env, model: CostModel, bound: float = 0.5, report: FitReport | None = None):
        super().__init__(env)
        if not isinstance(model, CostModel):
            raise TypeError(f"SafetyLayer needs a CostModel (g of the linear cost model), got {type(model).__name__}")
        if isinstance(bound, bool) or not isinstance(bound, int | float | np.floating | np.integer) \
                or not math.isfinite(bound):
            raise ValueError(f"SafetyLayer's bound C on the predicted step cost must be a finite number, got {bound!r}")
        size = observation.state_size(env.observation_spec)
        g = jax.eval_shape(model, jax.ShapeDtypeStruct((size,), jnp.float32))
        if tuple(g.shape) != (env.action_size,):
            raise ValueError(f"SafetyLayer's model gives g of shape {tuple(g.shape)} on this env's state of size "
                             f"{size}; the env's actions have {env.action_size} entries")
        self.graphdef, self.variables = nnx.split(model)
        self.bound = float(bound)
        self.report = report

    @property
    def model(self) -> CostModel:
        """The cost model (a fresh module of the kept parameters)."""
        return nnx.merge(self.graphdef, self.variables)

    def _constants(self) -> dict[str, jax.Array]:
        r = self.report
        loss, baseline = (r.loss, r.baseline_loss) if r is not None else (math.nan, math.nan)
        return {"safety_layer/fit_loss": jnp.asarray(loss, jnp.float32),
                "safety_layer/fit_baseline_loss": jnp.asarray(baseline, jnp.float32)}

    def reset(self, key: jax.Array) -> State:
        state = super().reset(key)
        zero = jnp.zeros((), jnp.float32)
        return state.replace(metrics={**state.metrics, "safety_layer/intervened": zero,
                                      "safety_layer/correction": zero, **self._constants()})

    def step(self, state: State, action: jax.Array) -> State:
        action = jnp.asarray(action, jnp.float32)
        g = self.model(state.obs)
        corrected, _ = correct(g, action, state.info[COST], self.bound)
        moved = jnp.linalg.norm(corrected - action)
        intervened = moved > 0  # False for a non-finite action: it goes through as given, for the env to handle
        state = super().step(state, jnp.where(intervened, corrected, action))
        return state.replace(metrics={**state.metrics, "safety_layer/intervened": intervened.astype(jnp.float32),
                                      "safety_layer/correction": jnp.where(intervened, moved, 0.0), **self._constants()})


def _check(config: ConstraintConfig) -> None:
    steps = config.safety_layer_steps
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ValueError(f"a safety layer needs at least one env step of exploration to pre-train on "
                         f"(safety_layer_steps, an integer), got {steps!r}; safety_layer_steps 0 means no safety "
                         "layer: leave the env unwrapped")


def pretrain(env: Env, config: ConstraintConfig, key: jax.Array) -> tuple[CostModel, FitReport]:
    """Fits the safety layer's cost model on ``env`` (unbatched; any wrappers): ``config.safety_layer_steps``
    env steps of uniformly random actions in ``[-1, 1]`` (rounded up to whole steps of
    ``config.safety_layer_envs`` envs, batched with :class:`~crax.core.env.Vmap` and
    :class:`~crax.core.env.AutoReset`) collect (s, a, c(s), c(s')); g is fitted by the mean squared error of
    c(s) + g(s)ᵀa against c(s') with Adam (``safety_layer_lr``), ``safety_layer_epochs`` passes over them in
    shuffled minibatches of ``safety_layer_batch``. One jitted program (``lax.scan`` over the steps and the
    updates), no host syncs inside it. Returns the fitted model and its :class:`FitReport`."""
    _check(config)
    n_envs = int(config.safety_layer_envs)
    length = -(-int(config.safety_layer_steps) // n_envs)
    rows = length * n_envs
    batch = min(int(config.safety_layer_batch), rows)
    per_epoch = rows // batch
    epochs = int(config.safety_layer_epochs)
    hidden = tuple(int(h) for h in config.safety_layer_hidden)
    state_size = observation.state_size(env.observation_spec)
    action_size = env.action_size
    explore_env = AutoReset(Vmap(CostMemory(env), n_envs))
    tx = optax.adam(float(config.safety_layer_lr))
    graphdef = nnx.split(nnx.eval_shape(lambda: CostModel(state_size, action_size, hidden, rngs=nnx.Rngs(0))),
                         nnx.Param, ...)[0]

    def explore(key: jax.Array) -> dict[str, jax.Array]:
        def step(s: State, k: jax.Array):
            a = jax.random.uniform(k, (n_envs, action_size), jnp.float32, -1.0, 1.0)
            ns = explore_env.step(s, a)
            obs = jnp.asarray(observation.state(s.obs), jnp.float32)
            return ns, {"obs": obs, "action": a, "cost": s.info[COST], "next_cost": ns.cost.astype(jnp.float32)}

        reset_key, key = jax.random.split(key)
        _, data = jax.lax.scan(step, explore_env.reset(reset_key), jax.random.split(key, length))
        return jax.tree.map(lambda x: x.reshape((rows, *x.shape[2:])), data)

    def run(key: jax.Array):
        key = jax.random.fold_in(key, _STREAM)
        explore_key, init_key, shuffle_key = jax.random.split(key, 3)
        data = explore(explore_key)
        model = CostModel(state_size, action_size, hidden, rngs=nnx.Rngs(init_key))
        mean, std = data["obs"].mean(0), data["obs"].std(0)
        model.mean[...] = mean
        model.std[...] = jnp.where(std > 1e-6, std, 1.0)
        _, params, stats = nnx.split(model, nnx.Param, ...)

        def errors(p: Any, d: dict[str, jax.Array]) -> jax.Array:
            g = nnx.merge(graphdef, p, stats)(d["obs"])
            return d["cost"] + jnp.sum(g * d["action"], axis=-1) - d["next_cost"]

        def update(carry, idx):
            p, opt = carry
            loss, grad = jax.value_and_grad(lambda p: jnp.mean(errors(p, jax.tree.map(lambda x: x[idx], data)) ** 2))(p)
            updates, opt = tx.update(grad, opt, p)
            return (optax.apply_updates(p, updates), opt), loss

        def epoch(carry, k):
            order = jax.random.permutation(k, rows)[: per_epoch * batch].reshape(per_epoch, batch)
            return jax.lax.scan(update, carry, order)

        (params, _), _ = jax.lax.scan(epoch, (params, tx.init(params)), jax.random.split(shuffle_key, epochs))
        squared = jax.lax.map(lambda d: errors(params, d) ** 2, data, batch_size=batch)
        report = {"loss": squared.mean(), "baseline_loss": jnp.mean((data["next_cost"] - data["cost"]) ** 2),
                  "cost_rate": jnp.mean((data["next_cost"] > 0).astype(jnp.float32))}
        return params, stats, report

    params, stats, report = jax.jit(run)(key)
    report = {k: float(v) for k, v in jax.device_get(report).items()}
    return nnx.merge(graphdef, params, stats), FitReport(transitions=rows, **report)


def safety_layer(env: Env, config: ConstraintConfig, key: jax.Array) -> Env:
    """``env`` (what a learner's ``wrap_env`` receives: ``EpisodeStats`` over the task) with a pre-trained
    :class:`SafetyLayer` (bound ``config.safety_layer_bound``) put under its :class:`EpisodeStats`, so that
    the episode statistics see the corrected steps. The exploration runs on the env under the statistics;
    the fit is the returned layer's ``report`` (:func:`find`) and its ``safety_layer/fit_*`` metrics."""
    _check(config)
    inner = env.env if isinstance(env, EpisodeStats) else env
    model, report = pretrain(inner, config, key)
    return under_episode_stats(env, lambda e: SafetyLayer(e, model, config.safety_layer_bound, report))


def find(env: Env) -> SafetyLayer | None:
    """The :class:`SafetyLayer` among ``env``'s wrappers (None without one): its ``report`` is the fit."""
    while True:
        if isinstance(env, SafetyLayer):
            return env
        if not isinstance(env, Wrapper):
            return None
        env = env.env
