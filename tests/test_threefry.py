"""crax/devices/threefry.py: jax's random-number hash written out on XLA:CPU.

* with it installed (as crax installs it where it starts work), a program's draws hash without a loop,
  and every key split, uniform, normal and permutation is bit-identical to jax's own looped lowering;
* ``crax.make`` installs it, ``import crax`` does not, and ``CRAX_UNROLL_THREEFRY=0`` keeps jax's lowering.
"""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.devices import threefry


def draws(key):
    keys = jax.random.split(key, 7)
    return (jax.random.key_data(jax.vmap(jax.random.split)(keys)), jax.random.uniform(keys[0], (33, 5)),
            jax.random.normal(keys[1], (129,)), jax.random.permutation(keys[2], 50),
            jax.random.bernoulli(keys[3], 0.3, (17,)))


def compiled_text(fn, *args) -> str:
    return jax.jit(fn).lower(*args).compile().as_text()


def test_draws_are_bit_identical_to_jax_own_lowering_and_unlooped():
    from jax._src.interpreters import mlir
    from jax._src.random import threefry2x32

    assert threefry.install()
    key = jax.random.key(7)
    written_out = jax.jit(lambda k: draws(k))(key)
    assert " while(" not in compiled_text(lambda k: jax.random.uniform(k, (64,)), key)
    # jax's own CPU lowering (a loop), for the same program compiled afresh
    mlir.register_lowering(threefry2x32.threefry2x32_p, threefry2x32._threefry2x32_cpu_lowering_rule, platform="cpu")
    try:
        looped = jax.jit(lambda k: draws(k))(key)
        assert " while(" in compiled_text(lambda k: jax.random.uniform(k, (65,)), key)
    finally:
        threefry._installed = False
        assert threefry.install()
    for a, b in zip(jax.tree.leaves(written_out), jax.tree.leaves(looped), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(jax.random.key_data(jax.random.split(jax.random.key(0))),
                                  np.asarray([[1797259609, 2579123966], [928981903, 3453687069]], np.uint32))
    assert jnp.asarray(written_out[1]).dtype == jnp.float32


@pytest.mark.slow
@pytest.mark.parametrize("switch,expected", [(None, "True"), ("0", "False")])
def test_installed_where_crax_starts_work_not_at_import(switch, expected):
    script = ("import crax; from crax.devices import threefry; assert not threefry._installed, 'installed at import'; "
              "crax.make('PointGoal1'); print(threefry._installed)")
    env = {k: v for k, v in os.environ.items() if k != "CRAX_UNROLL_THREEFRY"}
    if switch is not None:
        env["CRAX_UNROLL_THREEFRY"] = switch
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.stdout.strip().splitlines()[-1:] == [expected], out.stderr
