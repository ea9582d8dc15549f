"""What every crax command shares: how a bad input ends the command."""

from __future__ import annotations

import sys
from typing import Annotated, NoReturn

import tyro


def fail(prog: str, error: Exception) -> NoReturn:
    """Prints ``<prog>: error: <error>`` to stderr and exits with status 2 (bad input), as argparse does."""
    print(f"{prog}: error: {error}", file=sys.stderr)
    raise SystemExit(2)


Steps = Annotated[
    int,
    tyro.constructors.PrimitiveConstructorSpec(
        nargs=1,
        metavar="INT",
        instance_from_str=lambda args: int(float(args[0])),
        is_instance=lambda x: isinstance(x, int),
        str_from_instance=lambda x: [str(x)],
    ),
]
"""An integer flag that also takes scientific notation: ``--total-steps 2e6``."""
