"""Valid values of task parameters, declared once per suite and checked before a model is built.

Each suite lists its parameters' ranges in a class attribute ``params`` (name -> :class:`Range`
or :class:`Choice`); :meth:`crax.suites.base.Suite.check_params` checks the overrides given to
``crax.make`` and the values the suite's level table supplies against it, so a bad value is a
``ValueError`` naming the parameter, the value and the valid range instead of an error deep in
MuJoCo's compiler or a NaN in the first step.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["COUNT", "NON_NEGATIVE", "POSITIVE", "POSITIVE_COUNT", "REAL", "Choice", "Range", "check"]


@dataclasses.dataclass(frozen=True)
class Range:
    """A real (or, with ``integer``, whole) number in an interval; bounds None: unbounded.

    Values must be finite unless ``allow_inf`` (then +inf is accepted, e.g. "no boundary").
    """

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    integer: bool = False
    allow_inf: bool = False

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a finite number" if self.lo is None and self.hi is None else ""
        if self.lo is not None and self.hi is not None:
            left, right = "(" if self.lo_open else "[", ")" if self.hi_open else "]"
            bound = f"in {left}{self.lo:g}, {self.hi:g}{right}"
        elif self.lo is not None:
            bound = f"{'>' if self.lo_open else '>='} {self.lo:g}"
        elif self.hi is not None:
            bound = f"{'<' if self.hi_open else '<='} {self.hi:g}"
        else:
            bound = ""
        text = " ".join(p for p in (kind, bound) if p)
        return text + " (or inf)" if self.allow_inf else text

    def valid(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
            return False
        if np.ndim(value) != 0:
            return False
        if self.integer and not isinstance(value, (numbers.Integral, np.integer)):
            return False
        v = float(value)
        if math.isnan(v) or (math.isinf(v) and not (self.allow_inf and v > 0)):
            return False
        if self.lo is not None and not (v > self.lo if self.lo_open else v >= self.lo):
            return False
        return self.hi is None or (v < self.hi if self.hi_open else v <= self.hi)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of a fixed set of values (e.g. ``lidar``: ``pseudo`` or ``natural``)."""

    choices: tuple[Any, ...]

    def describe(self) -> str:
        return "one of " + ", ".join(map(str, self.choices))

    def valid(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.choices


REAL = Range()
"""Any finite number (reward weights, whose sign is the researcher's choice)."""
POSITIVE = Range(0.0, lo_open=True)
"""Sizes, distances and margins that must not vanish."""
NON_NEGATIVE = Range(0.0)
"""Cost weights (a cost is never negative), speeds, extents that may be zero."""
COUNT = Range(0, integer=True)
"""Numbers of objects that may be zero."""
POSITIVE_COUNT = Range(1, integer=True)
"""Numbers of bins, candidates or steps: at least one."""


def check(where: str, params: Mapping[str, Range | Choice], values: Mapping[str, Any]) -> None:
    """Raises ValueError for the first value in ``values`` outside its declared range.

    Names without a declared range are not checked here (the suite validates what it must
    itself, e.g. tuples of foot names); ``where`` (an env id) goes into the message.
    """
    for name, value in values.items():
        spec = params.get(name)
        if spec is not None and not spec.valid(value):
            raise ValueError(f"{name} must be {spec.describe()}, got {value!r} ({where})")
