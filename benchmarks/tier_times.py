"""Which fast-tier tests cost the most: per test function, from a ``pytest --durations=0`` log.

    CRAX_TEST_CACHE=/tmp/warm pytest -n 2 --durations=0 -p no:cacheprovider > /tmp/full.log
    python benchmarks/tier_times.py /tmp/full.log            # fast-tier functions of 3 s or more
    python benchmarks/tier_times.py /tmp/full.log --over 2   # another threshold

A function's time is its setup, call and teardown summed over its parametrized cases, so a
module fixture's compile counts against the first test that asks for it. The fast tier is what
``pytest -m "not slow"`` collects (asked of pytest here, a collection only). The fast tier's
budget is 3 minutes warm on 2 cores (docs/contributing.md): about 150 s of test time per worker
after collection; the script prints the fast tier's total so a change can be judged before a run.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys

LINE = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(\S.*)$", re.M)


def function_of(node_id: str) -> str:
    """``tests/x.py::test_f[case]`` -> ``tests/x.py::test_f``."""
    return re.sub(r"\[.*$", "", node_id)


def fast_tier() -> set[str]:
    """Node ids that ``pytest -m "not slow"`` collects."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
                          "-p", "no:cacheprovider"], capture_output=True, text=True, check=False).stdout
    return {line.strip() for line in out.splitlines() if "::" in line}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", help="output of pytest --durations=0")
    parser.add_argument("--over", type=float, default=3.0, help="list fast-tier functions of at least this many s")
    args = parser.parse_args(argv)
    per_function: collections.Counter[str] = collections.Counter()
    fast = fast_tier()
    fast_total = slow_total = 0.0
    for seconds, node in LINE.findall(open(args.log).read()):
        if node.strip() in fast:
            per_function[function_of(node.strip())] += float(seconds)
            fast_total += float(seconds)
        else:
            slow_total += float(seconds)
    print(f"fast tier: {len(fast)} tests, {fast_total:.0f} s of test time; slow tier: {slow_total:.0f} s")
    for name, seconds in per_function.most_common():
        if seconds < args.over:
            break
        print(f"{seconds:7.1f}  {name}")


if __name__ == "__main__":
    main()
