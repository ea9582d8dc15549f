"""Throughput of an env against the bare physics of its model (``crax bench``)."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import numbers
import os
import platform
import time
from typing import Any

import jax
import mujoco

from crax import bench_ceiling
from crax.core import physics as physics_impl
from crax.core import stepping
from crax.core.env import wrap_for_training
from crax.devices import xla_options
from crax.devices.settings import Physics
from crax.devices.sharding import per_device, shard_batch
from crax.suites.task_env import TaskEnv


@dataclasses.dataclass(frozen=True)
class BenchRow:
    """One line of the bench table."""

    num_envs: int
    compile_s: float
    env_steps_per_s: float
    physics_steps_per_s: float
    ceiling_steps_per_s: float | None = None
    """C MuJoCo's env steps/s (``mujoco.rollout`` of the env's physics model from the same states); None: not measured."""
    ceiling_threads: int | None = None
    """Threads of that rollout (one per core)."""
    ceiling_stopped: int = 0
    """Envs whose C rollout stopped early on a MuJoCo warning (only the steps they took are counted)."""

    @property
    def ratio(self) -> float:
        """Cost of an env step relative to the bare physics (the env's physics step × frame skip)."""
        return self.physics_steps_per_s / self.env_steps_per_s

    @property
    def ceiling_ratio(self) -> float | None:
        """crax's env steps/s over C MuJoCo's (above 1: crax is faster); None without a ceiling."""
        if self.ceiling_steps_per_s is None:
            return None
        return self.env_steps_per_s / self.ceiling_steps_per_s


@functools.cache
def host_cpu() -> str:
    """The host CPU's model and its widest x86 vector extension, e.g. ``AMD EPYC (avx2)``.

    XLA's CPU code is vectorised for the host, so the same machine kind with another CPU model
    (AVX-512 or not) gives very different JAX steps/s while C MuJoCo's barely move: records say which.
    """
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    widest = next((ext for ext in ("avx512f", "avx2", "avx", "sse4_2") if ext in flags), None)
    return f"{model} ({widest.removesuffix('f')})" if widest else model


def _compile(fn, *args) -> tuple[Any, float]:
    """(compiled function, compile seconds)."""
    t = time.perf_counter()
    compiled = xla_options.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - t


def _timed(compiled, state, key) -> float:
    t = time.perf_counter()
    jax.block_until_ready(compiled(state, key))
    return time.perf_counter() - t


def check_counts(*, prefix: str = "", **counts: int | None) -> None:
    """Raises ValueError unless every count given (None: not given) is an integer >= 1.

    ``prefix`` goes before the name in the message (``--`` for command-line flags, whose
    underscores then read as dashes).
    """
    for name, value in counts.items():
        if value is None:
            continue
        flag = prefix + (name.replace("_", "-") if prefix else name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise ValueError(f"{flag} must be an integer >= 1, got {value!r}")
        if value < 1:
            raise ValueError(f"{flag} must be >= 1, got {value!r}")


def bench(env: TaskEnv, num_envs: int, *, steps: int | None = None, repeats: int = 3,
          ceiling: bool = True) -> BenchRow:
    """Measures random-action env steps/s (auto-reset included), bare physics steps/s and, with
    ``ceiling``, the C MuJoCo ceiling (:class:`crax.bench_ceiling.Ceiling`: ``mujoco.rollout`` of the
    env's model from the same reset states, one thread per core, in env steps/s). The physics and
    the ceiling step what the env steps: its physics model, the scene without its inert bodies
    (:mod:`crax.core.physics_model`).

    The batch is spread over the devices (:func:`crax.devices.sharding.per_device`), except on a
    physics that steps a batch on one device (:func:`crax.core.physics.single_device`).

    The env, the physics and the ceiling calls alternate (``repeats`` of each, after one warm-up
    call each), and the fastest of each is kept: a load that comes and goes on a shared machine
    then slows them alike instead of skewing their ratios.

    Raises:
      ValueError: ``num_envs``, ``steps`` or ``repeats`` below 1.
      RuntimeError: ``ceiling`` with a MuJoCo that has no ``mujoco.rollout`` (the message says why).
    """
    check_counts(num_envs=num_envs, steps=steps, repeats=repeats)
    if ceiling and (why := bench_ceiling.unavailable()):
        raise RuntimeError(f"no C MuJoCo ceiling: {why}")
    steps = steps or int(min(1000, max(20, 200_000 // num_envs)))
    physics = env.physics_model  # what the env steps: its scene without the inert bodies (crax.core.physics_model)
    model, skip = physics.mjx_model, env.body.frame_skip

    def env_rollout(state, key):
        def body(s, k):
            a = jax.random.uniform(k, (local, *env.action_shape), minval=-1.0, maxval=1.0)  # a multi-agent env's: (agents, a)
            return local_env.step(s, a), None

        return jax.lax.scan(body, state, jax.random.split(key, steps))[0]

    def physics_rollout(data, key):
        def body(d, k):
            a = jax.random.uniform(k, (local, env.unwrapped.action_size), minval=-1.0, maxval=1.0)
            d = d.replace(ctrl=jax.vmap(env.body.ctrl)(a))
            d = jax.lax.scan(lambda d, _: (jax.vmap(stepping.step, (None, 0))(model, d), None), d, None, skip)[0]
            return d, None

        return jax.lax.scan(body, data, jax.random.split(key, steps))[0]

    one_device = physics_impl.single_device(env.physics)
    if one_device:
        (env_fn, local), physics_fn = (env_rollout, num_envs), physics_rollout
    else:
        env_fn, local = per_device(env_rollout, num_envs)
        physics_fn, _ = per_device(physics_rollout, num_envs)
    local_env = wrap_for_training(env, local)
    key = jax.random.key(0)
    state = xla_options.jit(wrap_for_training(env, num_envs).reset)(key)
    # the training stack carries MuJoCo's state and what the step reads (crax.core.env.PackedState);
    # bare MJX carries every field of its Data
    data = jax.jit(jax.vmap(physics.physics_data))(state.data)
    if not one_device:
        state, data = shard_batch(state, num_envs), shard_batch(data, num_envs)
    env_c, compile_s = _compile(env_fn, state, key)
    phys_c, _ = _compile(physics_fn, data, key)
    _timed(env_c, state, key)  # warm-up
    _timed(phys_c, data, key)
    c = bench_ceiling.Ceiling(env, state.data, steps) if ceiling else None
    env_s = phys_s = float("inf")
    c_sps, stopped = 0.0, 0
    try:
        if c is not None:
            c.run()  # warm-up
        for i in range(repeats):
            k = jax.random.fold_in(key, i)
            env_s = min(env_s, _timed(env_c, state, k))
            phys_s = min(phys_s, _timed(phys_c, data, k))
            if c is not None:
                sps, n_stopped = c.timed()
                if sps > c_sps:
                    c_sps, stopped = sps, n_stopped
    finally:
        if c is not None:
            c.close()
    n = num_envs * steps
    if c is None:
        return BenchRow(num_envs, compile_s, n / env_s, n / phys_s)
    return BenchRow(num_envs, compile_s, n / env_s, n / phys_s, c_sps, c.threads, stopped)


def time_calls(fn, *args, repeats: int) -> float:
    """Seconds per call of ``fn(*args)``: one call first (it compiles), then ``repeats`` calls timed
    together to their results' readiness (the benchmarks' timer of a trainer's programs)."""
    out = fn(*args)
    jax.block_until_ready(out)
    t = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t) / repeats


def physics_note(env: TaskEnv) -> str:
    """The line under ``crax bench``'s table saying which model its physics and C MuJoCo columns step,
    where the env's physics model leaves bodies of its scene out (:mod:`crax.core.physics_model`); "" otherwise."""
    inert, m = env.physics_model.inert, env.mj_model
    if not inert:
        return ""
    return (f"physics and C MuJoCo step the env's physics model: {m.nbody - len(inert)} of the scene's {m.nbody} "
            f"bodies ({len(inert)} mocap bodies that neither collide nor take part in the dynamics are left out, "
            f"as the env steps it; crax.core.physics_model)")


def bench_devices(physics: str = "jax") -> list:
    """The devices :func:`bench` spreads a batch over: all of them, or the first for a physics that steps
    a batch on one device (:func:`crax.core.physics.single_device`)."""
    return jax.devices()[:1] if physics_impl.single_device(physics) else jax.devices()


def format_table(env_id: str, rows: list[BenchRow], physics: str = "jax") -> str:
    """The bench table: one line per N; the C MuJoCo columns read ``-`` where no ceiling was measured."""
    devices = bench_devices(physics)
    threads = sorted({r.ceiling_threads for r in rows if r.ceiling_threads})
    c_note = f"; C MuJoCo: mujoco.rollout on {'/'.join(map(str, threads))} CPU thread(s)" if threads else ""
    lines = [
        f"{env_id} on {len(devices)} {devices[0].platform} device(s) ({host_cpu()}), physics {physics}, "
        f"random actions, auto-reset included{c_note}",
        f"{'num_envs':>9} {'compile s':>10} {'env steps/s':>13} {'physics steps/s':>16} {'env/physics cost':>17}"
        f" {'C MuJoCo steps/s':>17} {'crax/C':>8}",
    ]
    for r in rows:
        c_sps = "-" if r.ceiling_steps_per_s is None else f"{r.ceiling_steps_per_s:,.0f}"
        c_ratio = "-" if r.ceiling_ratio is None else f"{r.ceiling_ratio:.2f}x"
        lines.append(
            f"{r.num_envs:>9} {r.compile_s:>10.1f} {r.env_steps_per_s:>13,.0f} {r.physics_steps_per_s:>16,.0f} {r.ratio:>16.2f}x"
            f" {c_sps:>17} {c_ratio:>8}"
        )
    for r in rows:
        if r.ceiling_stopped:
            lines.append(f"N={r.num_envs}: {r.ceiling_stopped} C rollout(s) stopped early on a MuJoCo warning "
                         "(only the steps taken are counted)")
    return "\n".join(lines)


def row_record(env_id: str, env: TaskEnv, row: BenchRow, *, load: float, sitting: str, physics: str) -> dict:
    """One line of ``benchmarks/results/bench_envs.jsonl`` (``benchmarks/bench_envs.py``): the row's rates,
    the env, the machine, its load ``load`` when the row was taken, the ``sitting`` (when the invocation
    started: rows of one sitting are comparable with each other) and what the step ran on (``physics``,
    the devices, the XLA options; an RK4 model's ``rk4_stages``; the C MuJoCo ceiling where measured)."""
    devices = bench_devices(physics)
    record = {
        "env": env_id, "body": env.body.name, "suite": env.suite.name, "num_envs": row.num_envs,
        "compile_s": round(row.compile_s, 1), "env_steps_per_s": round(row.env_steps_per_s),
        "physics_steps_per_s": round(row.physics_steps_per_s), "ratio": round(row.ratio, 3),
        "devices": f"{len(devices)} {devices[0].platform}", "cpu_count": os.cpu_count(),
        "machine": platform.machine(), "cpu": host_cpu(), "load_1min": round(load, 2),
        "date": datetime.date.today().isoformat(), "sitting": sitting, "xla_options": xla_options.compiler_options(),
        "physics": physics,
    }
    if env.mj_model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
        record["rk4_stages"] = stepping.rk4_stages()
    if row.ceiling_steps_per_s is not None and row.ceiling_ratio is not None:
        record.update(ceiling_steps_per_s=round(row.ceiling_steps_per_s), ceiling_ratio=round(row.ceiling_ratio, 3),
                      ceiling_threads=row.ceiling_threads, ceiling_stopped=row.ceiling_stopped)
    return record


__all__ = ["BenchRow", "Physics", "bench", "bench_devices", "check_counts", "format_table", "physics_note", "row_record", "time_calls"]
