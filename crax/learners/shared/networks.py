"""Networks shared by every learner: MLPs, the tanh-squashed Gaussian actor and the observation normalizer.
They read flat inputs: a flat observation, or the shared encoder's features of a structured one
(:mod:`crax.learners.shared.encoders`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import jax
import jax.numpy as jnp
from flax import nnx


class NormalizerStat(nnx.Variable):
    """Running observation statistics (not trained by the optimizer)."""


@jax.custom_jvp
def swish(x: jax.Array) -> jax.Array:
    """x · sigmoid(x), as ``nnx.swish``, with a derivative that reuses the forward pass's sigmoid.

    Autodiff of ``x * sigmoid(x)`` keeps x and the sigmoid and makes several passes over them for the
    gradient; this rule keeps the one factor s + y·(1 − s) (y the output), so the backward pass is one
    multiply. The values and derivatives are the same to float rounding; the PPO update at SPEC's
    critics runs about 10 % faster on a CPU (docs/performance.md)."""
    return nnx.swish(x)


@swish.defjvp
def _swish_jvp(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
    (x,), (t,) = primals, tangents
    s = jax.nn.sigmoid(x)
    y = x * s
    return y, t * (s + y * (1.0 - s))


Activation = Literal["swish", "tanh", "relu"]
"""The hidden layers' activations a learner's networks take (``activation``): crax's swish, or the tanh
and ReLU of OmniSafe's and Safety-Gymnasium's baselines."""

ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {"swish": swish, "tanh": jnp.tanh, "relu": jax.nn.relu}

ActorStd = Literal["state", "parameter"]
"""How a Gaussian actor's scale is made (``actor_std``): from the observation by the network (``state``,
softplus of a second head), or one learned log-std per action dimension (``parameter``, OmniSafe's
``gaussian_learning`` actor and Spinning Up's)."""


class MLP(nnx.Module):
    """Fully connected network with ``activation`` between layers (none after the last). Called as
    ``net(x, *extra)``, it runs on ``x`` and any ``extra`` inputs concatenated along the last axis."""

    def __init__(self, din: int, hidden: tuple[int, ...], dout: int, *, rngs: nnx.Rngs, final_scale: float = 1.0,
                 activation: Activation = "swish"):
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; the choices are {', '.join(ACTIVATIONS)}")
        self.activation = activation
        sizes = (din, *hidden, dout)
        layers = [nnx.Linear(a, b, rngs=rngs) for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
        if final_scale != 1.0:
            last = layers[-1]
            last.kernel[...] = last.kernel[...] * final_scale
        self.layers = nnx.List(layers)

    def __call__(self, x: jax.Array, *extra: jax.Array) -> jax.Array:
        if extra:
            x = jnp.concatenate([x, *extra], axis=-1)
        act = ACTIVATIONS[self.activation]
        for layer in self.layers[:-1]:
            x = act(layer(x))
        return self.layers[-1](x)


class Normalizer(nnx.Module):
    """Running mean / variance of observations, merged batch-wise (Chan et al.'s parallel update).

    ``__call__`` standardizes and clips to ``±clip``; ``update`` folds in a batch of any leading
    shape. Variance is kept directly (not a sum of squares) so float32 stays accurate over 1e8+ steps.
    """

    def __init__(self, size: int, *, clip: float = 10.0, eps: float = 1e-6):
        self.count = NormalizerStat(jnp.zeros((), jnp.float32))
        self.mean = NormalizerStat(jnp.zeros((size,), jnp.float32))
        self.var = NormalizerStat(jnp.ones((size,), jnp.float32))
        self.clip = clip
        self.eps = eps

    def update(self, x: jax.Array) -> None:
        x = x.reshape(-1, x.shape[-1])
        m = jnp.asarray(x.shape[0], jnp.float32)
        b_mean = x.mean(0)
        b_var = x.var(0)
        n = self.count[...]
        total = n + m
        delta = b_mean - self.mean[...]
        self.mean[...] = self.mean[...] + delta * m / total
        self.var[...] = (n * self.var[...] + m * b_var + delta**2 * n * m / total) / total
        self.count[...] = total

    def __call__(self, x: jax.Array) -> jax.Array:
        z = (x - self.mean[...]) / jnp.sqrt(self.var[...] + self.eps)
        return jnp.clip(z, -self.clip, self.clip)


class TanhGaussianActor(nnx.Module):
    """Gaussian over pre-squash actions ``u``; the env receives ``tanh(u)`` in ``[-1, 1]``.

    With ``std="state"`` the MLP outputs a location and a raw scale per action dim, ``scale =
    softplus(raw) + min_std``; with ``std="parameter"`` it outputs the location alone and the scale is
    ``exp(log_std)``, one learned parameter per action dim (starting at 1). Log-probabilities and KLs are
    those of ``u``: the tanh Jacobian is the same for the old and the new policy at a stored ``u``, so it
    cancels in every probability ratio and KL.

    ``inputs`` is the size of what it reads: a flat observation, or the learner's encoder's features
    (:func:`crax.learners.shared.encoders.feature_size`).
    """

    def __init__(self, inputs: int, action_size: int, hidden: tuple[int, ...], *, rngs: nnx.Rngs,
                 min_std: float = 1e-3, activation: Activation = "swish", std: ActorStd = "state"):
        if std not in ("state", "parameter"):
            raise ValueError(f"unknown actor_std {std!r}; the choices are state, parameter")
        self.std = std
        outputs = 2 * action_size if std == "state" else action_size
        self.net = MLP(inputs, hidden, outputs, rngs=rngs, final_scale=0.01, activation=activation)
        if std == "parameter":
            self.log_std = nnx.Param(jnp.zeros((action_size,), jnp.float32))
        self.min_std = min_std

    def __call__(self, obs: Any) -> tuple[jax.Array, jax.Array]:
        if self.std == "parameter":
            loc = self.net(obs)
            return loc, jnp.broadcast_to(jnp.exp(self.log_std[...]), loc.shape)
        loc, raw = jnp.split(self.net(obs), 2, axis=-1)
        # softplus(raw + 0.5413) == 1 at raw == 0: the initial policy has unit std.
        return loc, jax.nn.softplus(raw + 0.5413) + self.min_std


def gaussian_log_prob(u: jax.Array, loc: jax.Array, scale: jax.Array) -> jax.Array:
    """Log-density of a diagonal Gaussian, summed over the last axis."""
    z = (u - loc) / scale
    return jnp.sum(-0.5 * z**2 - jnp.log(scale) - 0.5 * math.log(2 * math.pi), axis=-1)


def gaussian_entropy(scale: jax.Array) -> jax.Array:
    """Entropy of a diagonal Gaussian, summed over the last axis."""
    return jnp.sum(jnp.log(scale) + 0.5 * (1.0 + math.log(2 * math.pi)), axis=-1)


def gaussian_kl(loc_p: jax.Array, scale_p: jax.Array, loc_q: jax.Array, scale_q: jax.Array) -> jax.Array:
    """KL(p ‖ q) of diagonal Gaussians, summed over the last axis (equals the KL of the tanh-squashed ones)."""
    var_ratio = (scale_p / scale_q) ** 2
    t = ((loc_p - loc_q) / scale_q) ** 2
    return jnp.sum(0.5 * (var_ratio + t - 1.0 - jnp.log(var_ratio)), axis=-1)


def gaussian_kl_per_dim(loc_p: jax.Array, scale_p: jax.Array, loc_q: jax.Array, scale_q: jax.Array) -> jax.Array:
    """KL(p ‖ q) of diagonal Gaussians averaged over the last axis: the measure OmniSafe's trust regions
    bound (``kl_divergence(Normal, Normal).mean()``), so a δ means the same number in both."""
    return gaussian_kl(loc_p, scale_p, loc_q, scale_q) / loc_p.shape[-1]
