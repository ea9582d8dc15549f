"""Where a test run's time goes: every XLA compile, trace and lowering, attributed to its test.

As a pytest plugin (in-process compiles only; subprocesses such as notebook kernels are not seen)::

    PYTHONPATH=benchmarks COMPILE_LOG=/tmp/compile.log CRAX_TEST_CACHE=/tmp/cold pytest -n 2 -p compile_log
    python benchmarks/compile_log.py /tmp/compile.log        # seconds per test file, then per program

Each line of the log: seconds, event (``backend_compile_duration``, ``jaxpr_trace_duration``,
``jaxpr_to_mlir_module_duration``), the jitted function's name, the xdist worker and the test's node id.
"""

from __future__ import annotations

import collections
import os
import sys

EVENTS = ("backend_compile_duration", "jaxpr_trace_duration", "jaxpr_to_mlir_module_duration")
_current = ["<collection>"]


def _listener(event: str, duration: float, **kwargs) -> None:
    name = event.rsplit("/", 1)[-1]
    if name in EVENTS:
        with open(os.environ.get("COMPILE_LOG", "compile.log"), "a") as f:
            f.write(f"{duration:.3f}\t{name}\t{kwargs.get('fun_name', '')}\t"
                    f"{os.environ.get('PYTEST_XDIST_WORKER', '')}\t{_current[0]}\n")


def pytest_configure(config) -> None:
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(_listener)


def pytest_runtest_setup(item) -> None:
    _current[0] = item.nodeid


def summary(path: str, top: int = 30) -> str:
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    by_program: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for line in open(path):
        seconds, event, fun, _, node = line.rstrip("\n").split("\t")
        by_file[node.split("::")[0]][EVENTS.index(event)] += float(seconds)
        if event == EVENTS[0] and float(seconds) > 0.5:
            by_program[fun][0] += float(seconds)
            by_program[fun][1] += 1
    rows = ["compile  trace  lower  file"]
    for f, (c, t, lo) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        rows.append(f"{c:7.0f} {t:6.0f} {lo:6.0f}  {f}")
    rows.append("\ncompile  count  program (compiles over 0.5 s)")
    for fun, (c, n) in sorted(by_program.items(), key=lambda kv: -kv[1][0])[:top]:
        rows.append(f"{c:7.0f} {n:6d}  {fun}")
    return "\n".join(rows)


if __name__ == "__main__":
    print(summary(sys.argv[1]))
