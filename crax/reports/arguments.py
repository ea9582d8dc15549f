"""The benchmarks' readers of their command-line arguments: ``FIELD=VALUE`` config overrides as
``crax sweep --set`` reads them, per-learner step budgets and overrides, and off-policy layouts. Each
raises ``SystemExit`` with what it expected, as a command line answers a wrong argument."""

from __future__ import annotations

import dataclasses

from crax.tasks.compose import parse_assignments

LAYOUT_FIELDS = ("num_envs", "unroll_length", "updates_per_iteration", "batch_size")
"""The fields of an off-policy layout ``ENVSxUNROLLxUPDATESxBATCH``, in its order."""


def parse_field_values(pairs: tuple[str, ...]) -> dict[str, object]:
    """``FIELD=VALUE`` pairs as ``crax sweep --set`` reads them (the benchmarks' one reader of ``--set``)."""
    try:
        return parse_assignments(pairs, "--set")
    except ValueError as e:
        raise SystemExit(str(e)) from None


def parse_steps(pairs: tuple[str, ...], learners: tuple[str, ...], default: float) -> dict[str, int]:
    """Each learner's step budget: ``default`` unless ``LEARNER=STEPS`` names it."""
    out = {name: int(default) for name in learners}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in out:
            raise SystemExit(f"--steps expects LEARNER=STEPS with LEARNER one of {list(learners)}, got {pair!r}")
        try:
            out[name] = int(float(value))
        except ValueError:
            raise SystemExit(f"--steps {pair!r}: {value!r} is not a number of steps") from None
    return out


def parse_sets(pairs: tuple[str, ...], learners: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Per learner, the config overrides that apply to it (``FIELD=VALUE`` for every learner with the
    field, ``LEARNER:FIELD=VALUE`` for one); an override no named learner has is an error."""
    from crax.runs import get_learner

    fields = {name: set(get_learner(name).Config.__dataclass_fields__) for name in learners}
    out: dict[str, dict[str, object]] = {name: {} for name in learners}
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(f"--set expects FIELD=VALUE or LEARNER:FIELD=VALUE, got {pair!r}")
        name, colon, _ = pair.partition("=")[0].rpartition(":")
        if colon and name not in out:
            raise SystemExit(f"--set {pair!r}: {name!r} is not one of the learners {list(learners)}")
        ((field, parsed),) = parse_field_values((pair[len(name) + 1:] if colon else pair,)).items()
        takers = [name] if colon else [n for n in learners if field in fields[n]]
        if not takers or field not in fields[takers[0]]:
            raise SystemExit(f"--set {pair!r}: no learner of {list(learners) if not colon else [name]} has the "
                             f"config field {field!r}")
        for n in takers:
            out[n][field] = parsed
    return out


def parse_layout(text: str) -> dict[str, int]:
    """``"256x4x8x512"`` -> ``{"num_envs": 256, "unroll_length": 4, "updates_per_iteration": 8, "batch_size": 512}``."""
    parts = text.lower().split("x")
    if len(parts) != len(LAYOUT_FIELDS) or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"layout {text!r} is not ENVSxUNROLLxUPDATESxBATCH with positive integers, e.g. 256x4x8x512")
    return dict(zip(LAYOUT_FIELDS, map(int, parts), strict=True))


def parse_overrides(pairs: tuple[str, ...], config_cls) -> dict[str, object]:
    """``("init_alpha=0.01",)`` -> ``{"init_alpha": 0.01}``, each field checked against the config class."""
    fields = {f.name for f in dataclasses.fields(config_cls)}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in fields or not value:
            raise SystemExit(f"--set {pair!r}: not FIELD=VALUE with a field of {config_cls.__qualname__}; its fields: "
                             f"{', '.join(sorted(fields))}")
    return parse_field_values(pairs)
