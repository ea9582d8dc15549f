"""Valid ranges of learner config fields: declared on each field with :func:`ranged`, checked when a
config is built (:meth:`crax.learners.PPOConfig.__post_init__` calls :func:`check_ranges`)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

Bound = float | str | None
"""An interval end: a number, the name of another field of the same config, or None (unbounded)."""


@dataclasses.dataclass(frozen=True)
class Range:
    """The valid values of a numeric config field (of each element, for a tuple field).

    Each end is inclusive (``ge``/``le``) or exclusive (``gt``/``lt``) and may name another field
    (``ge="kappa_init"``); an unbounded end still excludes ±inf and NaN is never valid.
    ``integer`` admits integers only (not bools), ``optional`` admits None as well.
    """

    gt: Bound = None
    ge: Bound = None
    lt: Bound = None
    le: Bound = None
    integer: bool = False
    optional: bool = False

    def describe(self, config: Any) -> str:
        """The range in words, e.g. ``an integer >= 1``, ``in (0, 1]``, ``None or > 0``."""
        low = [(op, b) for op, b in ((">", self.gt), (">=", self.ge)) if b is not None]
        high = [(op, b) for op, b in (("<", self.lt), ("<=", self.le)) if b is not None]
        name = lambda b: f"{b} ({getattr(config, b)!r})" if isinstance(b, str) else f"{b:g}"  # noqa: E731
        if len(low) == len(high) == 1 and not self.names_a_field:
            (lo_op, lo), (hi_op, hi) = low[0], high[0]
            text = f"in {'(' if lo_op == '>' else '['}{lo:g}, {hi:g}{')' if hi_op == '<' else ']'}"
        else:
            text = " and ".join(f"{op} {name(b)}" for op, b in (*low, *high))
        kind = "an integer" if self.integer else ("a finite number" if not text else "")
        text = " ".join(filter(None, (kind, text)))
        return f"None or {text}" if self.optional else text

    @property
    def names_a_field(self) -> bool:
        return any(isinstance(b, str) for b in (self.gt, self.ge, self.lt, self.le))

    def contains(self, value: Any, config: Any) -> bool:
        """Whether ``value`` lies in the range (ends that name a field read it from ``config``)."""
        if value is None:
            return self.optional
        if isinstance(value, bool) or not isinstance(value, numbers.Integral if self.integer else numbers.Real):
            return False
        end = lambda b: getattr(config, b) if isinstance(b, str) else b  # noqa: E731
        checks = ((self.gt, lambda b: value > b), (self.ge, lambda b: value >= b),
                  (self.lt, lambda b: value < b), (self.le, lambda b: value <= b))
        return math.isfinite(value) and all(test(end(b)) for b, test in checks if b is not None)


def ranged(default: Any, **bounds: Any) -> Any:
    """A dataclass field with ``default`` and a :class:`Range` (``ranged(0.99, ge=0, le=1)``)."""
    return dataclasses.field(default=default, metadata={"range": Range(**bounds)})


def check_ranges(config: Any) -> None:
    """Raises ValueError naming the first field of ``config`` outside its declared :class:`Range`
    (a tuple field: any element outside it), with the valid range and the value given. Ranges that
    name another field are checked last, so a bad value is reported on its own field."""
    ranged_fields = [f for f in dataclasses.fields(config) if "range" in f.metadata]
    for f in sorted(ranged_fields, key=lambda f: f.metadata["range"].names_a_field):
        valid: Range = f.metadata["range"]
        value = getattr(config, f.name)
        many = isinstance(value, tuple | list)
        if not all(valid.contains(v, config) for v in (value if many else (value,))):
            must = ": every entry must be" if many else " must be"
            raise ValueError(f"config field {f.name!r}{must} {valid.describe(config)}, got {value!r}")
