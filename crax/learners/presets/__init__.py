"""Presets: another implementation's default settings for a learner, as data (one TOML file per
learner and preset, ``crax/learners/presets/<preset>/<learner>.toml``), so that ``crax train LEARNER
--env ID --preset omnisafe`` runs with OmniSafe's configuration for that algorithm without
translating flags.

A preset file has ``[source]`` (the algorithm and the file of the other implementation it was taken
from), ``[fields]`` (crax config fields and their values, the learner's defaults for every run) and
optionally ``[env."<id>".fields]`` (values for one env id over ``[fields]``, as OmniSafe's per-env
sections), and ``[notes]`` (where crax cannot take a setting as it is: what it does instead).
Flags given on the command line win over a preset's values. :func:`preset_values` checks a file
against the learner's config (every name a field, every value in range).
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def presets() -> list[str]:
    """The presets crax ships (folder names), sorted."""
    return sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("_"))


def learners_with(preset: str) -> list[str]:
    """The learner names that ``preset`` has a file for, sorted (ValueError naming the presets if unknown)."""
    if preset not in presets():
        raise ValueError(f"unknown preset {preset!r}; the presets are {', '.join(presets())}")
    return sorted(p.stem for p in (HERE / preset).glob("*.toml"))


def read(preset: str, learner: str) -> dict[str, Any]:
    """The parsed preset file of ``learner`` (ValueError naming the learners the preset covers if none)."""
    names = learners_with(preset)
    if learner not in names:
        raise ValueError(f"preset {preset!r} has no settings for learner {learner!r}; it covers {', '.join(names)}")
    path = HERE / preset / f"{learner}.toml"
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"preset file {path} is not valid TOML: {e}") from None


def _coerce(value: Any) -> Any:
    """A TOML value as a config field takes it: arrays become tuples."""
    return tuple(value) if isinstance(value, list) else value


def preset_values(preset: str, learner_cls: type, env_id: str | None = None) -> dict[str, Any]:
    """The config values ``preset`` sets for ``learner_cls`` (and for ``env_id`` over them), checked: a
    name that is not a field of ``learner_cls.Config`` or a value out of its range is a ValueError naming
    the preset file."""
    record = read(preset, learner_cls.name)
    values = dict(record.get("fields", {}))
    if env_id is not None:
        values.update(record.get("env", {}).get(env_id, {}).get("fields", {}))
    config_cls = learner_cls.Config
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(values) - set(fields))
    where = f"preset {preset!r} for {learner_cls.name!r}"
    if unknown:
        raise ValueError(f"{where} sets {', '.join(unknown)}, not fields of {config_cls.__qualname__}")
    values = {k: _coerce(v) for k, v in values.items()}
    try:
        config_cls(**values)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None
    return values


def source(preset: str, learner: str) -> dict[str, Any]:
    """The preset file's ``[source]`` and ``[notes]`` tables (what it was taken from, what differs)."""
    record = read(preset, learner)
    return {"source": record.get("source", {}), "notes": record.get("notes", {})}
