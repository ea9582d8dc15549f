"""The PPO family's optimizers: one Adam over the whole learner (crax's default), or one per network
as OmniSafe keeps them (the actor, the reward critic and the cost critic each with its own gradient
clip and learning rate, the actor's falling linearly over the run).

The per-network form is one ``optax.partition`` over the learner's parameters, labelled by the
learner attribute each belongs to, so a learner still has one ``nnx.Optimizer`` and its update hooks
are unchanged. Adam's moments are per parameter in both forms: they differ in what clips the
gradient (its global norm over every network, or each network's own) and in the learning rates.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import jax
import optax
from flax import nnx

GradClip = Literal["global", "per-network"]
"""What ``max_grad_norm`` clips (``grad_clip``): the gradient's global norm over every network, or each
network's alone (OmniSafe's ``clip_grad_norm_`` on the actor and on each critic)."""

LrDecay = Literal["none", "linear"]
"""How the actor's learning rate moves over a run (``lr_decay``): constant, or falling linearly to 0
(OmniSafe's ``linear_lr_decay``: torch's ``LinearLR`` on the actor, stepped once per iteration)."""

ACTOR = "actor"
"""The label of the actor's parameters (the learner attribute that holds them)."""


class OptimizerFields(Protocol):
    """The config fields the PPO family's optimizer reads (read-only, as a frozen config has them)."""

    @property
    def learning_rate(self) -> float: ...
    @property
    def critic_learning_rate(self) -> float | None: ...
    @property
    def max_grad_norm(self) -> float | None: ...
    @property
    def grad_clip(self) -> GradClip: ...
    @property
    def lr_decay(self) -> LrDecay: ...


def _adam(learning_rate: float, max_grad_norm: float | None, *, injected: bool) -> optax.GradientTransformation:
    adam = optax.inject_hyperparams(optax.adam)(learning_rate=learning_rate) if injected else optax.adam(learning_rate)
    return adam if max_grad_norm is None else optax.chain(optax.clip_by_global_norm(max_grad_norm), adam)


def per_network(config: OptimizerFields) -> bool:
    """Whether ``config`` asks for one optimizer per network (anything but one Adam over everything at
    one rate, clipped as a whole)."""
    return (config.grad_clip == "per-network" or config.lr_decay != "none"
            or (config.critic_learning_rate is not None and config.critic_learning_rate != config.learning_rate))


def _label(path: tuple, _: Any) -> str:
    """A parameter's label: the name of the learner attribute it belongs to."""
    return str(getattr(path[0], "key", path[0]))


def learner_optimizer(config: OptimizerFields) -> optax.GradientTransformation:
    """The optimizer of a whole PPO-family learner: Adam at ``learning_rate`` after clipping the global
    gradient norm at ``max_grad_norm``; or, when :func:`per_network`, one Adam per network (the actor
    at ``learning_rate``, every other network at ``critic_learning_rate``), each clipped alone."""
    if not per_network(config):
        return _adam(config.learning_rate, config.max_grad_norm, injected=False)
    critic_lr = config.learning_rate if config.critic_learning_rate is None else config.critic_learning_rate
    clip = config.max_grad_norm if config.grad_clip == "per-network" else None
    parts: dict[str, optax.GradientTransformation] = {ACTOR: _adam(config.learning_rate, clip, injected=True)}

    def labels(params: Any) -> Any:
        return jax.tree_util.tree_map_with_path(_label, params)

    def make(params: Any) -> optax.GradientTransformation:
        names = set(jax.tree.leaves(labels(params)))
        return optax.partition({**parts, **{n: _adam(critic_lr, clip, injected=False) for n in names - {ACTOR}}},
                               labels)

    tx = optax.GradientTransformation(lambda params: make(params).init(params),
                                      lambda updates, state, params=None: make(updates).update(updates, state, params))
    if config.grad_clip == "global" and config.max_grad_norm is not None:
        tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), tx)
    return tx


def actor_optimizer(config: OptimizerFields) -> optax.GradientTransformation:
    """The optimizer of an actor alone (e.g. CUP's two actor stages): Adam at ``learning_rate`` after
    clipping at ``max_grad_norm``, its rate settable when ``lr_decay`` moves it."""
    return _adam(config.learning_rate, config.max_grad_norm, injected=config.lr_decay != "none")


def actor_learning_rate(config: OptimizerFields, progress: jax.Array) -> jax.Array:
    """The actor's learning rate at ``progress`` (iterations done / the run's iterations):
    ``learning_rate · (1 − progress)`` with ``lr_decay="linear"``, else ``learning_rate``."""
    if config.lr_decay == "linear":
        return config.learning_rate * (1.0 - progress)
    return jax.numpy.asarray(config.learning_rate)


def set_actor_learning_rate(optimizer: nnx.Optimizer, value: jax.Array) -> None:
    """Sets the learning rate of the actor's Adam in ``optimizer`` (one from :func:`learner_optimizer`
    or :func:`actor_optimizer` with a settable rate), in place; does nothing to an optimizer without one."""
    for state in _injected(optimizer.opt_state):
        state.hyperparams["learning_rate"][...] = value


def _injected(state: Any) -> list[Any]:
    """The actor's ``InjectHyperparamsState`` nodes in an optimizer state (the partition's actor part,
    or the state itself for an actor's own optimizer)."""
    if hasattr(state, "hyperparams"):
        return [state]
    if hasattr(state, "inner_states"):  # optax.partition: only the actor's part is injected
        return _injected(state.inner_states[ACTOR]) if ACTOR in state.inner_states else []
    if hasattr(state, "inner_state"):  # MaskedState
        return _injected(state.inner_state)
    if isinstance(state, tuple | list):
        return [s for part in state for s in _injected(part)]
    return []
