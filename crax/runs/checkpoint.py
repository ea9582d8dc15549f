"""Run folders and checkpoints.

A run folder holds ``config.json`` (learner, env, overrides and every config field),
``checkpoints/step_<N>.msgpack`` (the latest two kept), ``metrics.jsonl`` and ``tb/seed_<i>/``.

A checkpoint is a msgpack (``flax.serialization``) map from pytree paths to numpy arrays holding
everything that evolves during training (the whole :class:`crax.learners.TrainState`: learner,
optimizer, multipliers and normalizer of every seed, the batched env states, the PRNG keys as raw
key data, the step and iteration counters), so a resumed run continues exactly where the
interrupted one stopped. Files are written to a temporary name and moved into place with
``os.replace``, so a crash never leaves a half-written checkpoint under a real name; if the newest
file is nevertheless unreadable (a disk fault, a copy cut short), the newest readable one is used
with a warning.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
from flax import serialization

from crax.devices import distributed
from crax.runs.files import atomic_write_bytes, read_json, write_json

CONFIG_FILE = "config.json"
CHECKPOINT_DIR = "checkpoints"
_CKPT_RE = re.compile(r"^step_(\d+)\.msgpack$")
FORMAT_VERSION = 2
_KEY_PREFIX = "prng_key:"  # stored leaves that were typed PRNG keys (raw key data, impl name)


def new_run_dir(root: str | os.PathLike, env_id: str, learner: str) -> Path:
    """A fresh ``<root>/<env>-<learner>-<timestamp>`` folder (suffixed if the name is taken)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{env_id}-{learner}-{stamp}"
    path, i = base, 1
    while path.exists():
        path, i = base.with_name(f"{base.name}-{i}"), i + 1
    path.mkdir(parents=True)
    return path


class CheckpointMismatch(ValueError):
    """A readable checkpoint that does not fit the template (another learner, config or env): no older
    file would fit either, so loading stops instead of falling back."""


def write_config(run_dir: str | os.PathLike, *, learner: str, env_id: str, env_kwargs: dict[str, Any],
                 config: Any, stages: list[str] | None = None, init_from: dict[str, Any] | None = None) -> None:
    """Writes ``config.json``; ``stages`` (curriculum env ids) and ``init_from`` only when given."""
    record = {"learner": learner, "env": env_id, "env_kwargs": env_kwargs, "config": dataclasses.asdict(config)}
    if stages:
        record["stages"] = list(stages)
    if init_from:
        record["init_from"] = init_from
    write_json(Path(run_dir) / CONFIG_FILE, record)


def read_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    """The ``config.json`` of a run folder; ValueError if the folder or the file is missing or invalid."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ValueError(f"run folder {str(run_dir)!r} does not exist")
    path = run_dir / CONFIG_FILE
    if not path.exists():
        raise ValueError(f"{str(run_dir)!r} is not a crax run folder: it has no {CONFIG_FILE}")
    record = read_json(path, "a crax run config")
    if not isinstance(record, dict):
        raise ValueError(f"{path} is not a crax run config: it holds a JSON {type(record).__name__}, not an object")
    missing = {"learner", "env", "config"} - set(record)
    if missing:
        raise ValueError(f"{path} lacks the entries {sorted(missing)}")
    record.setdefault("env_kwargs", {})
    return record


def config_from_dict(config_cls: type, values: dict[str, Any]):
    """Builds a frozen config dataclass from JSON values; unknown or invalid fields raise ValueError.
    A field missing from ``values`` takes the class's ``stored_defaults`` entry where it has one (what
    runs stored before the field existed ran with, when that differs from today's default), else its
    default."""
    names = {f.name: f for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(values) - set(names))
    retired = {k: why for k, why in getattr(config_cls, "retired_fields", {}).items() if k in unknown}
    if retired:
        reasons = "; ".join(sorted(set(retired.values())))
        raise ValueError(f"this run was stored by an older crax with config field(s) {sorted(retired)}, which "
                         f"{config_cls.__qualname__} no longer has: {reasons}. Train it again with this version, or "
                         "load it with the crax version that wrote it")
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown} for {config_cls.__qualname__}; valid fields: "
                         f"{', '.join(sorted(names))}")
    values = {**getattr(config_cls, "stored_defaults", {}), **values}
    fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    try:
        return config_cls(**fixed)
    except TypeError as e:
        raise ValueError(f"invalid config for {config_cls.__qualname__}: {e}") from None


def stored_differences(run_dir: str | os.PathLike, config: Any) -> dict[str, tuple[Any, Any]]:
    """The fields, ``total_steps`` aside, where ``config`` differs from the config stored in ``run_dir``
    (read as :func:`config_from_dict` reads it), each as ``(stored, asked)``."""
    stored = config_from_dict(type(config), read_config(run_dir)["config"])
    return {f.name: (getattr(stored, f.name), getattr(config, f.name)) for f in dataclasses.fields(config)
            if f.name != "total_steps" and getattr(stored, f.name) != getattr(config, f.name)}


def leaf_name(path) -> str:
    """The name a checkpoint stores a pytree leaf under: its path's keys joined by ``/`` (``env/data/qpos``)."""
    return "/".join(str(getattr(p, "key", getattr(p, "idx", getattr(p, "name", p)))) for p in path)


def _flatten(tree) -> dict[str, np.ndarray]:
    out = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        if distributed.is_key(leaf):
            out[_KEY_PREFIX + leaf_name(path)] = np.asarray(jax.random.key_data(leaf))
        else:
            out[leaf_name(path)] = np.asarray(leaf)
    return out


def checkpoints(run_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """``(env_steps, path)`` of every checkpoint in a run folder, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _CKPT_RE.match(p.name))]
    return sorted(found)


def save_checkpoint(run_dir: str | os.PathLike, state, *, env_steps: int, iteration: int, keep: int = 2) -> Path:
    """Writes ``state`` (any pytree) as ``checkpoints/step_<env_steps>.msgpack`` atomically and prunes
    all but the latest ``keep`` files. In a multi-process run every process must call it (the state
    is gathered from all of them); process 0 writes."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    path = folder / f"step_{int(env_steps)}.msgpack"
    host = distributed.to_host(state)
    if not distributed.is_main():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT_VERSION, "env_steps": int(env_steps), "iteration": int(iteration),
               "state": _flatten(host)}
    atomic_write_bytes(path, serialization.msgpack_serialize(payload))
    for _, old in checkpoints(run_dir)[:-keep]:
        old.unlink(missing_ok=True)
    return path


Upgrade = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
"""Rewrites a checkpoint's stored leaves (name -> array) written in an older layout into today's."""


def _read(path: Path, template, upgrade: Upgrade | None = None) -> dict[str, Any]:
    """One checkpoint file restored into ``template``'s structure (ValueError when unusable)."""
    try:
        payload = serialization.msgpack_restore(path.read_bytes())
        if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
            raise ValueError(f"unknown checkpoint format {payload.get('format') if isinstance(payload, dict) else None!r}"
                             f" (this crax reads format {FORMAT_VERSION})")
        stored = payload["state"]
        env_steps, iteration = int(payload["env_steps"]), int(payload["iteration"])
    except Exception as e:  # noqa: BLE001 - any decoding failure means the file is unusable
        raise ValueError(f"checkpoint {path} is corrupt or unreadable ({type(e).__name__}: {e})") from None
    if upgrade is not None:
        stored = upgrade(dict(stored))

    leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    restored = []
    for p, leaf in leaves:
        key = distributed.is_key(leaf)
        name = (_KEY_PREFIX if key else "") + leaf_name(p)
        if name not in stored and (legacy := _before_rules(name)) in stored:
            name = legacy
        if name not in stored and name.endswith(_ADDED_SINCE):
            stored[name] = np.zeros(leaf.shape, leaf.dtype)
        if name not in stored:
            raise CheckpointMismatch(f"checkpoint {path} does not match this learner/config/env: it lacks {name!r}")
        value = np.asarray(stored[name])
        want = tuple(leaf.shape) + (tuple(jax.random.key_data(jax.random.key(0)).shape) if key else ())
        if value.shape != want:
            raise CheckpointMismatch(f"checkpoint {path} does not match this learner/config/env: {name!r} has shape "
                             f"{value.shape}, expected {want}")
        # jax annotates wrap_key_data's argument as an Array; it takes a NumPy array as well
        restored.append(jax.random.wrap_key_data(value) if key else value.astype(leaf.dtype))  # pyright: ignore[reportArgumentType]
    state = jax.tree_util.tree_unflatten(treedef, restored)
    return {"state": state, "env_steps": env_steps, "iteration": iteration, "path": path}


_ADDED_SINCE = ("/episode/cost_peak",)
"""Env-state leaves added after checkpoints were written that lack them, restored as zeros, their value at
an episode's start: ``EpisodeStats``' running largest step cost (issue 64). An episode under way at the
checkpoint then reports the peak since the resume, a bound below its true one."""


def _before_rules(name: str) -> str:
    """Where a checkpoint written before the constraint rules became components of the learner (λ and
    the PID terms at ``model/0/lagrange``, now ``model/0/rule/lagrange``; docs/DECISIONS.md, decision 83)
    stored a rule's variable, so such a run resumes."""
    return name.replace("/rule/", "/", 1)


def load_checkpoint(run_dir: str | os.PathLike, template, upgrade: Upgrade | None = None) -> dict[str, Any]:
    """Restores the newest readable checkpoint of a run into the structure of ``template``.

    ``template`` may hold arrays or ``jax.ShapeDtypeStruct`` leaves (from ``jax.eval_shape``), or be
    a function of a checkpoint's env-step count returning one (runs whose state changes shape).
    An unreadable newest file is skipped with a warning that names it and the file used instead.
    ``upgrade`` rewrites what a file stores before it is matched to the template (a checkpoint of an
    older layout: :mod:`crax.runs.checkpoint_layouts`).

    Returns ``{"state", "env_steps", "iteration", "path"}``. Raises ValueError when the run has no
    checkpoint, when no file is readable, or when they do not match the template (another config).
    """
    found = checkpoints(run_dir)
    if not found:
        raise ValueError(f"no checkpoint in {str(run_dir)!r} (expected {CHECKPOINT_DIR}/step_<N>.msgpack); "
                         "the run was interrupted before its first checkpoint")
    errors = []
    for env_steps, path in reversed(found):
        try:
            result = _read(path, template(env_steps) if callable(template) else template, upgrade)
        except CheckpointMismatch:
            raise
        except ValueError as e:
            errors.append((path, e))
            continue
        if errors:
            warnings.warn(f"{errors[0][1]}; using the older {path} instead", stacklevel=2)
        return result
    raise errors[0][1]
