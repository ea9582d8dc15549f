"""What the networks see of a structured observation: convolutional torsos over its images, their features
concatenated with the normalized state vector (:mod:`crax.core.observation`).

On a dict observation (``{"state": (n,) float32, "<image key>": (H, W, C) uint8, ...}``) a learner holds one
:class:`Encoder`, shared by its actor and its critics (as DrQ and SAC-AE share theirs): one torso per image
entry on the image scaled to [0, 1] (uint8 / 255), their features concatenated with the state vector
(normalized by the learner's running :class:`~crax.learners.shared.networks.Normalizer`, which sees the
state vector only). The actor and the critics are MLPs on those features. The critics' losses train the
encoder; the actor reads its features under ``stop_gradient`` (an actor's gradient through a shared torso
destabilises it: Yarats et al. 2021, SAC-AE). Every family follows that rule the same way: the PPO
family's joint loss and the critics' chunked regression reach the encoder through the critics' terms
alone; the trust-region step moves the actor's MLP (it steps before the critics refit, so its reference
policy is the rollout's); the off-policy critics own the encoder (their optimizer trains it, their target
copy holds the target encoder the Polyak average moves). One encoder instead of one per network runs a
third of the convolutions (docs/DECISIONS.md, decision 87). A flat observation has no encoder: the
networks read the normalized vector, with the parameter trees and the numbers they always had.

Torsos (the learner config's ``encoder``):

* ``nature``: the Nature-DQN torso (Mnih et al. 2015), conv 32 8×8 stride 4, 64 4×4 stride 2, 64 3×3
  stride 1, ReLU after each, with "same" padding so that small images (16×16) keep a feature map;
* ``impala``: the IMPALA torso (Espeholt et al. 2018), three stacks of a 3×3 conv (16, 32, 32
  channels), a 3×3 max-pool of stride 2 and two residual blocks, then a ReLU.

Either's last feature map is average-pooled to at most :data:`MAX_CELLS` × :data:`MAX_CELLS` cells
(64×64 images: 8×8, no pooling; 256×256: 32×32 pooled by 4), flattened, and mapped by a Linear layer
and a ReLU to ``encoder_features`` features, so the Linear's size stays bounded whatever the image size.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import jax
import jax.numpy as jnp
from flax import nnx

from crax.core import observation
from crax.learners.shared.conv import conv_general_dilated

EncoderKind = Literal["nature", "impala"]
"""The convolutional torso a network runs on each image of a structured observation (``encoder``)."""

MAX_CELLS = 8
"""The last feature map is average-pooled to at most this many cells along each image axis."""


def observation_spec(observation_or_size: Any) -> Any:
    """One observation's shapes from a learner's ``observation`` argument: an observation spec (a
    ``jax.ShapeDtypeStruct`` or a dict of them, :attr:`crax.core.env.Env.observation_spec`) as it is, or
    a flat observation's size (an int) as its spec."""
    if isinstance(observation_or_size, int):
        return jax.ShapeDtypeStruct((observation_or_size,), jnp.float32)
    observation.check(observation_or_size)
    return observation_or_size


def feature_size(spec: Any, features: int) -> int:
    """The length of the features the networks read for observations of ``spec`` (a spec, or a flat
    observation's size): ``features`` per image entry plus the state vector's size on a structured
    observation (:class:`Encoder`), the observation's size on a flat one."""
    spec = observation_spec(spec)
    if not observation.is_structured(spec):
        return observation.flat_size(spec)
    return features * len(observation.images(spec)) + observation.state_size(spec)


def _window(cells: int) -> int:
    """The pooling window (and stride) that takes ``cells`` to at most :data:`MAX_CELLS`."""
    return max(1, math.ceil(cells / MAX_CELLS))


def _pooled(x: jax.Array) -> jax.Array:
    """``x`` (B, H, W, C) average-pooled to at most :data:`MAX_CELLS` cells along H and W."""
    window = (_window(x.shape[1]), _window(x.shape[2]))
    if window == (1, 1):
        return x
    return nnx.avg_pool(x, window, strides=window, padding="SAME", count_include_pad=False)


def feature_cells(height: int, width: int) -> tuple[int, int]:
    """The cells of a torso's pooled feature map for an image of ``height`` × ``width``: both torsos
    divide each side by 8 (rounding up), then the pooling by its window (rounding up)."""
    cells = (math.ceil(height / 8), math.ceil(width / 8))
    return tuple(math.ceil(n / _window(n)) for n in cells)  # type: ignore[return-value]


def _conv(din: int, dout: int, kernel: int, stride: int, rngs: nnx.Rngs) -> nnx.Conv:
    """A square "same"-padded convolution whose kernel gradient runs fast inside ``lax.scan`` on a CPU
    (:mod:`crax.learners.shared.conv`)."""
    return nnx.Conv(din, dout, (kernel, kernel), strides=(stride, stride), padding="SAME", rngs=rngs,
                    conv_general_dilated=conv_general_dilated)


class NatureTorso(nnx.Module):
    """The Nature-DQN convolutions (32 8×8 s4, 64 4×4 s2, 64 3×3 s1, ReLU, "same" padding) on a batch of
    images ``(B, H, W, channels)`` in [0, 1]: the feature map ``(B, ⌈H/8⌉, ⌈W/8⌉, 64)``."""

    def __init__(self, channels: int, *, rngs: nnx.Rngs):
        shapes = ((32, 8, 4), (64, 4, 2), (64, 3, 1))
        convs, din = [], channels
        for dout, kernel, stride in shapes:
            convs.append(_conv(din, dout, kernel, stride, rngs))
            din = dout
        self.convs = nnx.List(convs)
        self.channels = din

    def __call__(self, x: jax.Array) -> jax.Array:
        for conv in self.convs:
            x = jax.nn.relu(conv(x))
        return x


class ResidualBlock(nnx.Module):
    """x + conv(relu(conv(relu(x)))), two 3×3 convolutions keeping the channels (IMPALA's)."""

    def __init__(self, channels: int, *, rngs: nnx.Rngs):
        self.conv0 = _conv(channels, channels, 3, 1, rngs)
        self.conv1 = _conv(channels, channels, 3, 1, rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return x + self.conv1(jax.nn.relu(self.conv0(jax.nn.relu(x))))


def max_pool_3x3_s2(x: jax.Array) -> jax.Array:
    """``nnx.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")`` on ``(B, H, W, C)``, as the maximum of
    its nine strided slices: the same values, and a gradient XLA:CPU takes 3× faster than max-pool's
    (select-and-scatter)."""
    (top, bottom), (left, right) = jax.lax.padtype_to_pads(x.shape[1:3], (3, 3), (2, 2), "SAME")
    padded = jnp.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=-jnp.inf)
    rows, cols = -(-x.shape[1] // 2), -(-x.shape[2] // 2)
    slices = [padded[:, i:i + 2 * rows - 1:2, j:j + 2 * cols - 1:2] for i in range(3) for j in range(3)]
    return functools.reduce(jnp.maximum, slices)


class ImpalaTorso(nnx.Module):
    """The IMPALA convolutions on a batch of images ``(B, H, W, channels)`` in [0, 1]: three stacks of a
    3×3 conv, a 3×3 max-pool of stride 2 and two :class:`ResidualBlock`, then a ReLU; the feature map
    ``(B, ⌈H/8⌉, ⌈W/8⌉, 32)``."""

    def __init__(self, channels: int, *, rngs: nnx.Rngs):
        convs, blocks, din = [], [], channels
        for dout in (16, 32, 32):
            convs.append(_conv(din, dout, 3, 1, rngs))
            blocks.append(nnx.List([ResidualBlock(dout, rngs=rngs), ResidualBlock(dout, rngs=rngs)]))
            din = dout
        self.convs = nnx.List(convs)
        self.blocks = nnx.List(blocks)
        self.channels = din

    def __call__(self, x: jax.Array) -> jax.Array:
        for conv, blocks in zip(self.convs, self.blocks, strict=True):
            x = max_pool_3x3_s2(conv(x))
            for block in blocks:
                x = block(x)
        return jax.nn.relu(x)


TORSOS: dict[str, type[NatureTorso] | type[ImpalaTorso]] = {"nature": NatureTorso, "impala": ImpalaTorso}


class ImageEncoder(nnx.Module):
    """One image entry's features: a torso (:data:`TORSOS`) on the image scaled to [0, 1], its feature
    map pooled to at most :data:`MAX_CELLS` cells a side, flattened, then Linear and ReLU to ``features``.
    Takes ``(..., H, W, C)`` uint8 with any leading axes; returns ``(..., features)``."""

    def __init__(self, shape: tuple[int, int, int], kind: EncoderKind, features: int, *, rngs: nnx.Rngs):
        if kind not in TORSOS:
            raise ValueError(f"unknown encoder {kind!r}; the choices are {', '.join(TORSOS)}")
        self.torso = TORSOS[kind](shape[-1], rngs=rngs)
        self.linear = nnx.Linear(math.prod(feature_cells(*shape[:2])) * self.torso.channels, features, rngs=rngs)

    def __call__(self, image: jax.Array) -> jax.Array:
        lead = image.shape[:-3]
        x = image.reshape(-1, *image.shape[-3:]).astype(jnp.float32) / 255.0
        x = _pooled(self.torso(x))
        x = jax.nn.relu(self.linear(x.reshape(x.shape[0], -1)))
        return x.reshape(*lead, x.shape[-1])


class Encoder(nnx.Module):
    """A structured observation's features: one :class:`ImageEncoder` per image entry (in key order), their
    features concatenated with the state vector. ``size`` is the features' length (``features`` per image
    plus the state's size). Takes the observation with the state already normalized, any leading axes."""

    def __init__(self, spec: dict[str, Any], kind: EncoderKind, features: int, *, rngs: nnx.Rngs):
        shapes = observation.images(spec)
        if not shapes:
            raise ValueError("an Encoder needs an observation with at least one image entry")
        self.images = nnx.Dict({k: ImageEncoder(tuple(shapes[k].shape), kind, features, rngs=rngs)
                                for k in sorted(shapes)})
        self.size = feature_size(spec, features)

    def __call__(self, x: dict[str, jax.Array]) -> jax.Array:
        parts = [self.images[k](x[k]) for k in sorted(self.images)]
        return jnp.concatenate([*parts, observation.state(x).astype(jnp.float32)], axis=-1)


def encoded(encoder: Encoder | None, x: Any) -> Any:
    """The features the networks read at normalized observations ``x``: ``encoder``'s, or ``x`` itself (a
    flat observation has no encoder)."""
    return x if encoder is None else encoder(x)
