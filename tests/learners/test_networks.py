"""crax.learners.shared.networks.swish: the values and derivatives of flax's swish, x·sigmoid(x), through its own rule."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from crax.learners.shared.networks import MLP, swish

X = jnp.linspace(-12.0, 12.0, 97)


def test_swish_values_match_flax_and_its_derivative_the_formula():
    np.testing.assert_allclose(swish(X), nnx.swish(X), rtol=1e-6, atol=1e-7)
    s = 1.0 / (1.0 + np.exp(-np.asarray(X, np.float64)))
    by_formula = s + np.asarray(X, np.float64) * s * (1.0 - s)  # d/dx x·s(x) = s + x·s·(1 − s)
    np.testing.assert_allclose(jax.vmap(jax.grad(swish))(X), by_formula, rtol=1e-5, atol=1e-6)


def test_swish_forward_and_second_derivatives_match_autodiff_of_flax_swish():
    t = jnp.cos(X)
    np.testing.assert_allclose(jax.jvp(swish, (X,), (t,))[1], jax.jvp(nnx.swish, (X,), (t,))[1], rtol=1e-5, atol=1e-6)
    second = jax.vmap(jax.grad(jax.grad(swish)))(X)
    np.testing.assert_allclose(second, jax.vmap(jax.grad(jax.grad(nnx.swish)))(X), rtol=1e-4, atol=1e-5)


def test_mlp_gradient_is_the_one_autodiff_of_nnx_swish_gives():
    net = MLP(5, (16, 16), 2, rngs=nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (32, 5))

    def reference(model, x):  # the same layers with flax's swish, differentiated by autodiff
        for layer in model.layers[:-1]:
            x = nnx.swish(layer(x))
        return jnp.sum(model.layers[-1](x) ** 2)

    ours = nnx.grad(lambda m: jnp.sum(m(x) ** 2))(net)
    theirs = nnx.grad(lambda m: reference(m, x))(net)
    for a, b in zip(jax.tree.leaves(nnx.state(ours)), jax.tree.leaves(nnx.state(theirs)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
