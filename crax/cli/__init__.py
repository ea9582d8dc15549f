"""The ``crax`` command line, one module per command family: :mod:`~crax.cli.commands` (the ``crax``
entry point and its small commands), :mod:`~crax.cli.train`, :mod:`~crax.cli.eval`,
:mod:`~crax.cli.studies` (sweep, table, plot, curriculum, transfer)."""

from crax.cli.commands import main

__all__ = ["main"]
