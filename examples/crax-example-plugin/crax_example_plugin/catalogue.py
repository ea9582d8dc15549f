"""A catalogue of env ids of the plugin's own: the Sled on the paper's Circle under versioned names.

A catalogue lists ids and says how to build each: (body class, suite class, level). crax's own
ids come from two catalogues registered the same way (the paper's ``{Body}{Suite}{Level}`` and
Safety-Gymnasium's ``Safety<Agent><Task><Level>-v0``); this one adds ``SledCircuit1-v0`` to
``SledCircuit3-v0``, which ``crax.env_ids()``, ``crax list`` and ``crax.make`` then know like
any other. ``crax.make("SledCircuit2-v0")`` builds the Sled on Circle at level 2 (the env's own
``id`` is the suite's, ``SledCircle2``).
"""

from __future__ import annotations

from crax.suites import Circle
from crax.suites.catalogue import TableCatalogue


def _table():
    from crax_example_plugin.sled import Sled

    return {f"SledCircuit{level}-v0": (Sled, Circle, level) for level in Circle.levels}


SLED_CIRCUIT = TableCatalogue("sled-circuit", "the example plugin's Sled circuits", r"SledCircuit\d+-v\d+", _table,
                              what="a Sled circuit of the example plugin")
"""The catalogue the plugin's ``crax_register_catalogues`` hook returns."""
