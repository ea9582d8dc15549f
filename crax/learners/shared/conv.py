"""A 2-D convolution whose gradients XLA:CPU runs fast inside a loop.

The encoders' SGD steps run in ``lax.scan`` (the minibatch epochs). There XLA:CPU takes the gradients
of ``lax.conv_general_dilated`` far slower than in straight-line code: in a loop body it misses the
Eigen convolutions it uses outside. Measured on 1024 images: a 4×4 stride-2 layer's kernel gradient
13.7 s a scan step against 0.26 s unrolled (the Nature torso's whole gradient 10.7 s against 0.25 s);
a 3×3 stride-1 layer's input gradient on 32×32×16 maps 2.0 s against 0.31 s. So a minibatch epoch of a
pixel PPO run took minutes instead of seconds. :func:`conv_general_dilated`, on the CPU, computes the
same convolution in forms whose gradients XLA runs at straight-line speed in a loop:

* stride 1 (IMPALA's 3×3 layers): as the matrix product of the image's shifted slices (im2col) with
  the kernel, differentiated by JAX (0.99 s a scan step for both gradients of that 3×3 layer);
* larger strides (Nature's layers): lax's convolution with a custom VJP whose kernel gradient is an
  ordinary convolution of the transposed input with the output's cotangent (``rhs_dilation`` = the
  stride); the input's gradient stays lax's.

Same values (exactly, on the CPU). Other backends, and other convolutions (dilated, grouped, not
NHWC/HWIO), run lax's. Flax's ``nnx.Conv(..., conv_general_dilated=conv_general_dilated)`` takes it in
place of lax's.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

NHWC = ("NHWC", "HWIO", "NHWC")


def _standard(dimension_numbers: Any) -> bool:
    """Whether ``dimension_numbers`` is NHWC input, HWIO kernel, NHWC output (nnx.Conv's on 4-D input)."""
    want = lax.conv_dimension_numbers((1, 1, 1, 1), (1, 1, 1, 1), NHWC)
    given = lax.conv_dimension_numbers((1, 1, 1, 1), (1, 1, 1, 1), dimension_numbers)
    return given == want


def conv_general_dilated(lhs: jax.Array, rhs: jax.Array, window_strides: Any, padding: Any,
                         lhs_dilation: Any = None, rhs_dilation: Any = None, dimension_numbers: Any = None,
                         feature_group_count: int = 1, precision: Any = None, **kwargs: Any) -> jax.Array:
    """``lax.conv_general_dilated``'s signature and values; a 2-D NHWC/HWIO convolution without
    dilation or groups takes its kernel gradient as described in the module docstring, any other
    falls back to lax's."""
    extras = {k: v for k, v in kwargs.items() if v is not None and not (k == "batch_group_count" and v == 1)}
    plain = (lhs.ndim == 4 and feature_group_count == 1 and not extras
             and all(d == 1 for d in (lhs_dilation or (1, 1))) and all(d == 1 for d in (rhs_dilation or (1, 1)))
             and dimension_numbers is not None and _standard(dimension_numbers))
    if not plain or jax.default_backend() != "cpu":
        return lax.conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                        dimension_numbers, feature_group_count, precision=precision, **kwargs)
    pads = lax.padtype_to_pads(lhs.shape[1:3], rhs.shape[:2], window_strides, padding) \
        if isinstance(padding, str) else padding
    pads, strides = tuple(map(tuple, pads)), tuple(window_strides)
    if strides == (1, 1):
        return _im2col(pads, precision, lhs, rhs)
    return _conv(strides, pads, precision, lhs, rhs)


def _im2col(pads: tuple, precision: Any, x: jax.Array, w: jax.Array) -> jax.Array:
    """The stride-1 convolution as one matrix product: the padded input's ``kh·kw`` shifted slices,
    concatenated along the channels, times the kernel flattened to ``(kh·kw·C, O)``."""
    kh, kw = w.shape[:2]
    padded = jnp.pad(x, ((0, 0), *pads, (0, 0)))
    rows, cols = padded.shape[1] - kh + 1, padded.shape[2] - kw + 1
    patches = jnp.concatenate([padded[:, i:i + rows, j:j + cols] for i in range(kh) for j in range(kw)], axis=-1)
    return jnp.matmul(patches, w.reshape(-1, w.shape[-1]), precision=precision)


def _forward(strides: tuple[int, int], pads: tuple, precision: Any, x: jax.Array, w: jax.Array) -> jax.Array:
    return lax.conv_general_dilated(x, w, strides, pads, dimension_numbers=NHWC, precision=precision)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1, 2))
def _conv(strides: tuple[int, int], pads: tuple, precision: Any, x: jax.Array, w: jax.Array) -> jax.Array:
    return _forward(strides, pads, precision, x, w)


def _conv_fwd(strides, pads, precision, x, w):
    return _forward(strides, pads, precision, x, w), (x, w)


def _conv_bwd(strides, pads, precision, residuals, dy):
    x, w = residuals
    dx = jax.vjp(lambda v: _forward(strides, pads, precision, v, w), x)[1](dy)[0]
    # dw[i, j, c, o] = Σ_{n, h, w} x_padded[n, h·s + i, w·s + j, c] · dy[n, h, w, o]: a convolution of the input
    # read as (C, H, W, N) with dy read as a (Ho, Wo, N, O) kernel dilated by the stride.
    kh, kw = w.shape[:2]
    dw = lax.conv_general_dilated(x.transpose(3, 1, 2, 0), dy.transpose(1, 2, 0, 3), (1, 1), pads,
                                  rhs_dilation=strides, dimension_numbers=NHWC, precision=precision)
    return dx, dw[:, :kh, :kw, :].transpose(1, 2, 0, 3).astype(w.dtype)


_conv.defvjp(_conv_fwd, _conv_bwd)
