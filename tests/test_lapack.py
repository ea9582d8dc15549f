"""crax/devices/lapack.py: batched Cholesky and triangular solves on XLA:CPU are split into LAPACK calls
small enough that jaxlib never blocks a thread-pool worker on them (the Spider training hang).

* every LAPACK call of a compiled Spider-sized batch (256 × 18 × 18) stays below jaxlib's
  2e5-FLOP parallelization threshold, and the results equal NumPy's;
* the deadlock reproduction, four independent batched factorizations inside a scan (without the
  split it hung on its first call on a 2-core machine, session 24), finishes in a subprocess.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from crax.devices import lapack as _lapack

N, BATCH = 18, 256  # Spider: nv = 18; measure_tau trains 256 envs


def spd(key, shape):
    x = jax.random.normal(key, (*shape, N, N))
    return x @ jnp.swapaxes(x, -1, -2) + N * jnp.eye(N)


def factor_and_solve(a, b):
    c = jax.scipy.linalg.cho_factor(a)
    return c[0], jax.scipy.linalg.cho_solve(c, b)


def lapack_calls(fn, *args):
    """(target, operand shapes) of every LAPACK custom call in the compiled CPU program."""
    calls = []
    for line in jax.jit(fn).lower(*args).compile().as_text().splitlines():
        target = re.search(r'custom_call_target="(lapack_\w+)"', line)
        if target:
            operands = line.split("operand_layout_constraints={", 1)[1].split("}}", 1)[0]
            shapes = [tuple(int(d) for d in dims.split(",")) for dims in re.findall(r"[fc]\d+\[([\d,]+)\]", operands)]
            calls.append((target.group(1), shapes))
    return calls


@pytest.fixture(autouse=True, scope="module")
def split():
    """The split lowerings, as crax installs them where it starts work (``crax.make``, the Trainer, the CLI)."""
    assert _lapack.install()


@pytest.mark.slow
def test_installed_where_crax_starts_work_not_at_import():
    script = ("import crax; from crax.devices import lapack; assert not lapack._installed, 'installed at import'; "
              "crax.make('PointGoal1'); assert lapack._installed, 'not installed by crax.make'; print('ok')")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "ok", out.stderr


def test_batched_calls_stay_below_parallel_threshold():
    a = spd(jax.random.key(0), (BATCH,))
    b = jax.random.normal(jax.random.key(1), (BATCH, N, 1))
    calls = lapack_calls(factor_and_solve, a, b)
    assert {t for t, _ in calls} == {"lapack_spotrf_ffi", "lapack_strsm_ffi"}
    for target, shapes in calls:
        batch = shapes[0][0]
        if target == "lapack_spotrf_ffi":
            work = batch * (N**3 // 3)
        else:  # left-side solve of y (rows × cols): rows² · cols per matrix
            rows, cols = shapes[-1][-2:]
            work = batch * rows * rows * cols
        assert work < 200_000, (target, shapes)
    assert sum(s[0][0] for t, s in calls if t == "lapack_spotrf_ffi") == BATCH  # one factorization, split


@pytest.mark.parametrize("batch", [BATCH, 2000])  # 3 chunks (separate calls) and 20 (lax.map loop)
def test_split_results_match_numpy(batch):
    a = spd(jax.random.key(2), (batch,))
    b = jax.random.normal(jax.random.key(3), (batch, N, 2))
    chol, x = jax.jit(factor_and_solve)(a, b)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    np.testing.assert_allclose(np.triu(chol), np.swapaxes(np.linalg.cholesky(a64), -1, -2), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(x, np.linalg.solve(a64, b64), rtol=1e-3, atol=1e-5)


REPRO = textwrap.dedent("""
    import jax, jax.numpy as jnp
    from crax.devices import startup
    startup.configure_jax()  # what crax.make, the Trainer and the CLI call first
    x = jax.random.normal(jax.random.key(0), (4, 256, 18, 18))
    m = x @ jnp.swapaxes(x, -1, -2) + 18 * jnp.eye(18)

    @jax.jit
    def f(m):
        def body(c, _):
            ls = [jnp.linalg.cholesky(c[i]) for i in range(4)]  # independent: may run concurrently
            return jnp.stack([c[i] + 1e-3 * ls[(i + 1) % 4] for i in range(4)]), None
        return jax.lax.scan(body, m, None, length=20)[0].sum()

    for _ in range(30):  # without the split the first call hangs (three tries of three, idle 2-core host)
        f(m).block_until_ready()
    print("done")
""")


@pytest.mark.slow  # a fresh process (the hang it guards against needs XLA's thread pool to itself)
def test_concurrent_batched_cholesky_does_not_hang():
    try:
        out = subprocess.run([sys.executable, "-c", REPRO], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("concurrent batched Cholesky calls deadlocked XLA:CPU's thread pool")
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-2000:]
