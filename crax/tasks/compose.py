"""Adding registered constraint terms and sensors to any task, by name.

``crax.make("AntVelocity1", constraints={"ActionEnergy": {"weight": 0.05}}, sensors={...})`` looks
each name up in the plugin registry (built-in or from an installed plugin), checks its parameters
and that it fits the body, and builds the component; :class:`crax.suites.task_env.TaskEnv` then lets
it add MJCF (``build``), binds it to the compiled model and appends it to the suite's sensors or
constraints, so an added term is ``metrics["cost/<term>"]`` and part of the total cost, and an
added sensor extends the observation (after the suite's own). The suite's code does not change.

Names match exactly or up to case and ``_``/``-`` (``action_energy`` is ``ActionEnergy``). On the
command line, ``crax train ... --constraint action_energy:weight=0.05 --sensor NAME:p=v,q=w``
(:func:`parse_flags`) gives the same dictionaries, recorded in the run's ``env_kwargs``.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from crax.core.params import check
from crax.plugins.hookspecs import SINGULAR
from crax.plugins.manager import registry
from crax.suites import checks

KINDS = ("constraints", "sensors")
"""The component kinds ``crax.make`` adds by name (its keyword arguments of the same names)."""


def _fold(name: str) -> str:
    return re.sub(r"[_\-\s]", "", name).lower()


def lookup(kind: str, name: str) -> type:
    """The registered class of ``kind`` (constraints or sensors) named ``name``: an exact match,
    else the one match up to case and ``_``/``-``; ValueError listing the valid names otherwise."""
    reg = registry()
    table = reg.table(kind)
    if isinstance(name, str):
        if name in table:
            return table[name]
        matches = [n for n in table if _fold(n) == _fold(name)]
        if len(matches) == 1:
            return table[matches[0]]
        broken = [n for n in reg.rejected(kind) if _fold(n) == _fold(name)]
        if broken:
            reg.get(kind, broken[0])  # raises the component's contract error
    raise ValueError(f"unknown {SINGULAR[kind]} {name!r}; valid choices: {', '.join(sorted(table))}")


def signature(cls: type) -> tuple[list[str], list[str]]:
    """The parameters a component's constructor takes by name, and those without a default."""
    names, required = [], []
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY):
            continue
        names.append(p.name)
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
    return names, required


def components(kind: str, specs: Mapping[str, Mapping[str, Any] | None] | None, body: type, where: str) -> list:
    """Builds the components ``{name: {parameter: value}}`` of ``kind`` for a task on ``body``.

    Raises ValueError, before anything is compiled, for an unknown name (listing the registered
    ones), a parameter the component does not take or a required one missing (listing its
    parameters), a value outside the component's declared ``params`` range, a body whose kinds
    lack the component's ``requires`` (listing the bodies it fits), or a constructor's own check.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown component kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    if not specs:
        return []
    what = SINGULAR[kind]
    if not isinstance(specs, Mapping):
        raise ValueError(f"{kind} must be a dict {{name: {{parameter: value}}}}, got {specs!r}")
    out = []
    for name, params in specs.items():
        cls = lookup(kind, name)
        label = f"{what} {cls.name} ({where})"
        params = {} if params is None else params
        if not isinstance(params, Mapping):
            raise ValueError(f"the parameters of {label} must be a dict {{parameter: value}}, got {params!r}")
        names, required = signature(cls)
        takes = f"its parameters: {', '.join(names) or '(none)'}"
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise ValueError(f"{label} takes no parameter(s) {', '.join(map(str, unknown))}; {takes}")
        missing = [p for p in required if p not in params]
        if missing:
            raise ValueError(f"{label} needs the parameter(s) {', '.join(missing)}; {takes}")
        check(label, cls.params, params)
        if "term" in params and not (isinstance(params["term"], str) and params["term"] and "/" not in params["term"]):
            raise ValueError(f"term must be a non-empty name without '/', got {params['term']!r} ({label})")
        needs = frozenset(getattr(cls, "requires", frozenset()))
        if not needs <= body.kinds:
            fits = sorted(b for b, bc in registry().bodies.items() if needs <= bc.kinds)
            raise ValueError(
                f"{label} needs a body of kind(s) {', '.join(sorted(needs))}; {body.name} is "
                f"{', '.join(sorted(body.kinds)) or 'of no kind'}; bodies it fits: {', '.join(fits) or '(none)'}"
            )
        try:
            component = cls(**params)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{label}: {e}") from None
        checks.check_components([component] if kind == "constraints" else [], [component] if kind == "sensors" else [])
        out.append(component)
    return out


def check_terms(where: str, own: Iterable[str], added: Sequence) -> None:
    """Raises ValueError when an added term's metric name is already a term of the task or of
    another added term (their costs would be merged into one metric)."""
    seen = list(own)
    for c in added:
        if c.term in seen:
            raise ValueError(f"constraint {c.name} adds the cost term {c.term!r}, which {where} already has "
                             f"(terms: {', '.join(seen)}); pass term=<another name>")
        seen.append(c.term)


# ---- command-line form ----------------------------------------------------------------------------

_WORDS = {"true": True, "false": False, "none": None, "null": None}


def _value(raw: str) -> Any:
    """A flag value: a Python literal (``0.05``, ``3``, ``(1, 2)``, ``'a b'``), true/false/none,
    inf/nan, else the text itself (``goal``)."""
    if raw.lower() in _WORDS:
        return _WORDS[raw.lower()]
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        value = float(raw)
    except ValueError:
        return raw
    return value if math.isinf(value) or math.isnan(value) else raw


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_spec(text: str, flag: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:param=value,param=value`` -> ``(NAME, {param: value})``."""
    name, _, rest = text.partition(":")
    name = name.strip()
    form = f"expected {flag} NAME or {flag} NAME:param=value,param=value"
    if not name:
        raise ValueError(f"{flag} {text!r}: no name; {form}")
    params: dict[str, Any] = {}
    for item in _split(rest) if rest.strip() else []:
        _assign(params, item, f"{flag} {text!r}", "param=value", form)
    return name, params


def parse_assignments(texts: Sequence[str], flag: str) -> dict[str, Any]:
    """``FIELD=VALUE`` flag values (one each) -> ``{FIELD: value}``, values read as in :func:`parse_spec`."""
    out: dict[str, Any] = {}
    for text in texts:
        _assign(out, text, f"{flag} {text!r}", "FIELD=VALUE", f"expected {flag} FIELD=VALUE, e.g. {flag} learning_rate=1e-4")
    return out


def parse_env_params(texts: Sequence[str]) -> dict[str, Any]:
    """``--env-param NAME=VALUE`` flag values -> ``crax.make`` keywords; ValueError for a keyword that has
    its own flag (``constraints``, ``sensors``, ``physics``)."""
    params = parse_assignments(texts, "--env-param")
    for name, flag in (("constraints", "--constraint"), ("sensors", "--sensor"), ("physics", "--physics")):
        if name in params:
            raise ValueError(f"--env-param {name}=...: give it with {flag}, not --env-param")
    return params


def _assign(into: dict[str, Any], item: str, where: str, shape: str, form: str) -> None:
    key, eq, raw = item.partition("=")
    key = key.strip()
    if not eq or not key.isidentifier():
        raise ValueError(f"{where}: {item.strip()!r} is not {shape}; {form}")
    if key in into:
        raise ValueError(f"{where}: {key} is given twice")
    into[key] = _value(raw.strip())


def parse_flags(constraints: Sequence[str] = (), sensors: Sequence[str] = ()) -> dict[str, Any]:
    """The ``crax.make`` keyword arguments of ``--constraint``/``--sensor`` flag values:
    ``{"constraints": {...}, "sensors": {...}}``, each present only when given."""
    out: dict[str, Any] = {}
    for kind, flag, texts in (("constraints", "--constraint", constraints), ("sensors", "--sensor", sensors)):
        table: dict[str, dict[str, Any]] = {}
        for text in texts:
            name, params = parse_spec(text, flag)
            if name in table:
                raise ValueError(f"{flag} {name} is given twice; give each {SINGULAR[kind]} once, with all its parameters")
            table[name] = params
        if table:
            out[kind] = table
    return out
