"""The encoders' convolution (crax.learners.shared.conv): lax's values and gradients, computed in forms
whose gradients XLA:CPU runs fast inside ``lax.scan``; the IMPALA torso's strided-slice max-pool."""

from __future__ import annotations

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from jax import lax

from crax.learners.shared.conv import NHWC, conv_general_dilated
from crax.learners.shared.encoders import max_pool_3x3_s2

SHAPES = [  # (height, width, in, out, kernel, stride): Nature's and IMPALA's layers, odd sizes, a kernel over the image
    (32, 32, 3, 32, 8, 4), (8, 8, 32, 64, 4, 2), (4, 4, 64, 64, 3, 1), (7, 9, 2, 5, 3, 1), (5, 6, 3, 4, 3, 2),
    (10, 10, 2, 3, 8, 4), (3, 3, 2, 2, 8, 4),
]


def loss(conv, x, w, stride):
    return jnp.sum(jnp.sin(conv(x, w, (stride, stride), "SAME", dimension_numbers=NHWC)))


@pytest.mark.parametrize("h, w, cin, cout, k, s", SHAPES)
def test_values_and_both_gradients_are_lax(h, w, cin, cout, k, s):
    x = jax.random.normal(jax.random.key(0), (3, h, w, cin))
    kernel = jax.random.normal(jax.random.key(1), (k, k, cin, cout))
    ours = conv_general_dilated(x, kernel, (s, s), "SAME", dimension_numbers=NHWC)
    theirs = lax.conv_general_dilated(x, kernel, (s, s), "SAME", dimension_numbers=NHWC)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4)
    g_ours = jax.grad(loss, (1, 2))(conv_general_dilated, x, kernel, s)
    g_lax = jax.grad(loss, (1, 2))(lax.conv_general_dilated, x, kernel, s)
    for a, b in zip(g_ours, g_lax, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * float(jnp.max(jnp.abs(b))))  # float summation order


def convolutions(fn, *args) -> list:
    """The ``conv_general_dilated`` equations of ``fn``'s jaxpr, nested ones (scan bodies, custom VJPs) included."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "conv_general_dilated":
                found.append(eqn)
            for sub in jex.core.jaxprs_in_params(eqn.params):
                walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return found


def test_the_gradient_in_a_scan_has_only_batch_major_convolutions():
    """XLA:CPU runs a convolution with the batch and feature axes swapped (lax's kernel gradient) ~50× slower
    in a loop: the scanned SGD step on a Nature layer holds none, and a stride-1 layer no convolution at all."""
    x = jnp.ones((2, 4, 8, 8, 32))

    def steps(kernel, stride):
        def step(w, xb):
            return w - 1e-3 * jax.grad(lambda w: loss(conv_general_dilated, xb, w, stride))(w), None
        return jax.lax.scan(step, kernel, x)[0]

    strided = convolutions(lambda w: steps(w, 2), jnp.ones((4, 4, 32, 64)))
    assert strided and all(eqn.params["dimension_numbers"].lhs_spec == (0, 3, 1, 2) for eqn in strided)
    assert not convolutions(lambda w: steps(w, 1), jnp.ones((3, 3, 32, 32)))
    with_lax = convolutions(lambda w: jax.grad(lambda w: loss(lax.conv_general_dilated, x[0], w, 2))(w),
                            jnp.ones((4, 4, 32, 64)))
    assert any(eqn.params["dimension_numbers"].lhs_spec != (0, 3, 1, 2) for eqn in with_lax)  # what it avoids


def test_other_convolutions_fall_back_to_lax():
    x = jax.random.normal(jax.random.key(0), (2, 9, 9, 4))
    kernel = jax.random.normal(jax.random.key(1), (3, 3, 2, 6))
    dilated_grouped = [conv(x, kernel, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=NHWC, feature_group_count=2)
                       for conv in (conv_general_dilated, lax.conv_general_dilated)]
    np.testing.assert_allclose(*dilated_grouped, rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 32, 32, 3), (2, 7, 9, 2), (2, 1, 1, 1), (2, 16, 5, 4)])
def test_max_pool_is_flax_s(shape):
    x = jax.random.normal(jax.random.key(0), shape)
    expected = nnx.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
    np.testing.assert_array_equal(max_pool_3x3_s2(x), expected)
