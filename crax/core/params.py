"""Task parameters and learner config fields, each declared once with its valid values.

A suite declares each of its parameters once, as a :class:`Param` (default or one value per
level, valid values, meaning) in its class attribute ``params``; the suite's constructor,
``crax.make``, ``crax.parameters``, the ``crax params`` command and ``docs/parameters.md`` all read
that declaration. :meth:`crax.suites.base.Suite.check_params` checks the overrides given to
``crax.make`` and the level's defaults against it, so a bad value is a ``ValueError`` naming the
parameter, the value and the valid range instead of an error deep in MuJoCo's compiler or a NaN in
the first step. Components (sensors, constraint terms) and plugin suites may declare only the
valid values (a :class:`Range` or :class:`Choice`), their defaults then being their constructor's.
A learner config declares each field's range with :func:`ranged`; :func:`check_fields` (called
when the config is built) checks them all.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import typing
from collections.abc import Mapping
from typing import Any

import numpy as np
from flax import nnx

__all__ = [
    "COUNT", "NON_NEGATIVE", "POSITIVE", "POSITIVE_COUNT", "REAL", "Choice", "Param", "Range", "TaskParam", "check",
    "check_fields", "ranged",
]


@dataclasses.dataclass(frozen=True)
class Range:
    """A real (or, with ``integer``, whole) number in an interval; an end None is unbounded.

    The one declaration of valid values for task parameters (a suite's or component's ``params``)
    and learner config fields (:func:`ranged`). Values must be finite unless ``allow_inf`` (then
    +inf is accepted, e.g. "no boundary"); NaN and booleans never pass; ``optional`` admits None.
    In a learner config, ``at_least`` names another field the value may not be below
    (``kappa_max >= kappa_init``), read from the config given as ``context``.
    """

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    integer: bool = False
    allow_inf: bool = False
    optional: bool = False
    at_least: str | None = None

    @property
    def names_a_field(self) -> bool:
        return self.at_least is not None

    def describe(self, context: Any = None) -> str:
        """The range in words, e.g. ``an integer >= 1``, ``in (0, 1]``, ``None or > 0``."""
        if self.lo is not None and self.hi is not None:
            left, right = "(" if self.lo_open else "[", ")" if self.hi_open else "]"
            parts = [f"in {left}{self.lo:g}, {self.hi:g}{right}"]
        else:
            parts = [f"{'>' if self.lo_open else '>='} {self.lo:g}"] if self.lo is not None else []
            parts += [f"{'<' if self.hi_open else '<='} {self.hi:g}"] if self.hi is not None else []
        if self.at_least is not None:
            value = f" ({getattr(context, self.at_least)!r})" if context is not None else ""
            parts.append(f">= {self.at_least}{value}")
        bound = " and ".join(parts)
        kind = "an integer" if self.integer else "" if bound else "a finite number"
        text = " ".join(p for p in (kind, bound) if p) + (" (or inf)" if self.allow_inf else "")
        return f"None or {text}" if self.optional else text

    def valid(self, value: Any, context: Any = None) -> bool:
        """Whether ``value`` lies in the range (``at_least`` is read from ``context``)."""
        if value is None:
            return self.optional
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
            return False
        if np.ndim(value) != 0:  # pyright: ignore[reportArgumentType]  (numpy's ArrayLike omits numbers.Real)
            return False
        if self.integer and not isinstance(value, (numbers.Integral, np.integer)):
            return False
        v = float(value)
        if math.isnan(v) or (math.isinf(v) and not (self.allow_inf and v > 0)):
            return False
        if self.lo is not None and not (v > self.lo if self.lo_open else v >= self.lo):
            return False
        if self.hi is not None and not (v < self.hi if self.hi_open else v <= self.hi):
            return False
        return self.at_least is None or v >= getattr(context, self.at_least)


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


@dataclasses.dataclass(frozen=True)
class Param:
    """One task parameter, declared once: its default, valid values and meaning.

    Attributes:
      default: the value when not given; None with ``levels`` (or where the suite derives it,
        e.g. Velocity's threshold from the body).
      valid: its valid values; None where the suite checks the value itself (tuples of names).
      doc: what it is, one line (``crax.parameters`` and ``docs/parameters.md`` show it).
      levels: the default by level (``{1: 0.20, 2: 0.18, 3: 0.16}``) where it depends on the level.
    """

    default: Any = None
    valid: Range | Choice | None = None
    doc: str = ""
    levels: Mapping[int, Any] | None = None

    def __post_init__(self):
        if self.levels is not None and self.default is not None:
            raise TypeError("give a Param either a default or a default per level (levels), not both")

    def at(self, level: int) -> Any:
        """The default at ``level``."""
        return self.default if self.levels is None else self.levels[level]

    def describe(self) -> str:
        """The valid values in words, e.g. ``> 0``, ``one of pseudo, natural``."""
        return self.valid.describe() if self.valid is not None else "checked by the task"


def check(where: str, params: Mapping[str, Param | Range | Choice], values: Mapping[str, Any]) -> None:
    """Raises ValueError for the first value in ``values`` outside its declared range.

    Names without a declared range are not checked here (the suite validates what it must
    itself, e.g. tuples of foot names); ``where`` (an env id) goes into the message.
    """
    for name, value in values.items():
        spec = params.get(name)
        if isinstance(spec, Param):
            spec = spec.valid
        if spec is not None and not spec.valid(value):
            raise ValueError(f"{name} must be {spec.describe()}, got {value!r} ({where})")


class TaskParam(nnx.Variable):
    """A task quantity that may be swept or scheduled without recompiling the physics model."""


def ranged(default: Any, *, gt: float | None = None, ge: float | str | None = None, lt: float | None = None,
           le: float | None = None, integer: bool = False, optional: bool = False) -> Any:
    """A learner config field with ``default`` and its :class:`Range`: ``ranged(0.99, ge=0, le=1)``;
    ``gt``/``lt`` are exclusive ends, ``ge``/``le`` inclusive ones, ``ge`` may name another field."""
    at_least = ge if isinstance(ge, str) else None
    ge = None if isinstance(ge, str) else ge
    if (gt is not None and ge is not None) or (lt is not None and le is not None):
        raise TypeError("give one numeric lower end (gt or ge) and one upper end (lt or le)")
    valid = Range(lo=gt if gt is not None else ge, hi=lt if lt is not None else le, lo_open=gt is not None,
                  hi_open=lt is not None, integer=integer, optional=optional, at_least=at_least)
    return dataclasses.field(default=default, metadata={"range": valid})


@functools.cache
def _choice_fields(cls: type) -> dict[str, tuple[Any, ...]]:
    """The fields of the dataclass ``cls`` annotated with a ``Literal``, and its choices (none when an
    annotation cannot be resolved, e.g. a plugin's name imported only for type checkers)."""
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        return {}
    return {f.name: typing.get_args(hints[f.name]) for f in dataclasses.fields(cls)
            if typing.get_origin(hints[f.name]) is typing.Literal}


def check_fields(config: Any) -> None:
    """Raises ValueError naming the first field of the dataclass ``config`` outside its declared
    :class:`Range` (a tuple field: any element outside it) or its ``Literal`` choices, with the valid
    range or choices and the value given.
    Ranges that name another field are checked last, so a bad value is reported on its own field."""
    for name, choices in _choice_fields(type(config)).items():
        value = getattr(config, name)
        if value not in choices:
            raise ValueError(f"config field {name!r} must be one of {', '.join(map(str, choices))}, got {value!r}")
    ranged_fields = [f for f in dataclasses.fields(config) if "range" in f.metadata]
    for f in sorted(ranged_fields, key=lambda f: f.metadata["range"].names_a_field):
        valid: Range = f.metadata["range"]
        value = getattr(config, f.name)
        many = isinstance(value, tuple | list)
        if not all(valid.valid(v, config) for v in (value if many else (value,))):
            must = ": every entry must be" if many else " must be"
            raise ValueError(f"config field {f.name!r}{must} {valid.describe(config)}, got {value!r}")
