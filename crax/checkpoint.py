"""Run folders and checkpoints.

A run folder holds ``config.json`` (learner, env, overrides and every config field),
``checkpoints/step_<N>.msgpack`` (the latest two kept), ``metrics.jsonl`` and ``tb/seed_<i>/``.

A checkpoint is a msgpack (``flax.serialization``) map from pytree paths to numpy arrays: the
learner and optimizer state of every seed, the typed PRNG keys as raw key data, the env-step count
and the iteration. Env states are not stored; a resumed run starts fresh episodes. Files are
written to a temporary name and moved into place with ``os.replace``, so a crash never leaves a
half-written checkpoint under a real name.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import re
from pathlib import Path
from typing import Any

import jax
import numpy as np
from flax import serialization

CONFIG_FILE = "config.json"
CHECKPOINT_DIR = "checkpoints"
_CKPT_RE = re.compile(r"^step_(\d+)\.msgpack$")
FORMAT_VERSION = 1


def new_run_dir(root: str | os.PathLike, env_id: str, learner: str) -> Path:
    """A fresh ``<root>/<env>-<learner>-<timestamp>`` folder (suffixed if the name is taken)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{env_id}-{learner}-{stamp}"
    path, i = base, 1
    while path.exists():
        path, i = base.with_name(f"{base.name}-{i}"), i + 1
    path.mkdir(parents=True)
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_config(run_dir: str | os.PathLike, *, learner: str, env_id: str, env_kwargs: dict[str, Any],
                 config: Any) -> None:
    record = {"learner": learner, "env": env_id, "env_kwargs": env_kwargs, "config": dataclasses.asdict(config)}
    atomic_write_bytes(Path(run_dir) / CONFIG_FILE, (json.dumps(record, indent=2) + "\n").encode())


def read_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    """The ``config.json`` of a run folder; ValueError if the folder or the file is missing or invalid."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ValueError(f"run folder {str(run_dir)!r} does not exist")
    path = run_dir / CONFIG_FILE
    if not path.exists():
        raise ValueError(f"{str(run_dir)!r} is not a crax run folder: it has no {CONFIG_FILE}")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not valid JSON: {e}") from None
    missing = {"learner", "env", "config"} - set(record)
    if missing:
        raise ValueError(f"{path} lacks the entries {sorted(missing)}")
    record.setdefault("env_kwargs", {})
    return record


def config_from_dict(config_cls: type, values: dict[str, Any]):
    """Builds a frozen config dataclass from JSON values; unknown or invalid fields raise ValueError."""
    names = {f.name: f for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown} for {config_cls.__qualname__}; valid fields: "
                         f"{', '.join(sorted(names))}")
    fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    try:
        return config_cls(**fixed)
    except TypeError as e:
        raise ValueError(f"invalid config for {config_cls.__qualname__}: {e}") from None


def _path_key(path) -> str:
    return "/".join(str(getattr(p, "key", getattr(p, "idx", getattr(p, "name", p)))) for p in path)


def _flatten(tree) -> dict[str, np.ndarray]:
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {_path_key(path): np.asarray(leaf) for path, leaf in leaves}


def checkpoints(run_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """``(env_steps, path)`` of every checkpoint in a run folder, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _CKPT_RE.match(p.name))]
    return sorted(found)


def save_checkpoint(run_dir: str | os.PathLike, *, model, key: jax.Array, env_steps: int, iteration: int,
                    keep: int = 2) -> Path:
    """Writes ``checkpoints/step_<env_steps>.msgpack`` atomically and prunes all but the latest ``keep``."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT_VERSION,
        "env_steps": int(env_steps),
        "iteration": int(iteration),
        "key": np.asarray(jax.random.key_data(key)),
        "model": _flatten(model),
    }
    path = folder / f"step_{int(env_steps)}.msgpack"
    atomic_write_bytes(path, serialization.msgpack_serialize(payload))
    for _, old in checkpoints(run_dir)[:-keep]:
        old.unlink(missing_ok=True)
    return path


def load_checkpoint(run_dir: str | os.PathLike, template_model) -> dict[str, Any]:
    """Restores the latest checkpoint of a run into the structure of ``template_model``.

    ``template_model`` may hold arrays or ``jax.ShapeDtypeStruct`` leaves (from ``jax.eval_shape``).

    Returns ``{"model", "key", "env_steps", "iteration", "path"}``. Raises ValueError when the run
    has no checkpoint, the file is corrupt, or it does not match the template (another config).
    """
    found = checkpoints(run_dir)
    if not found:
        raise ValueError(f"no checkpoint in {str(run_dir)!r} (expected {CHECKPOINT_DIR}/step_<N>.msgpack); "
                         "the run was interrupted before its first checkpoint")
    _, path = found[-1]
    try:
        payload = serialization.msgpack_restore(path.read_bytes())
        if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
            raise ValueError("unknown checkpoint format")
        stored = payload["model"]
        key = jax.random.wrap_key_data(np.asarray(payload["key"]))
        env_steps, iteration = int(payload["env_steps"]), int(payload["iteration"])
    except Exception as e:  # noqa: BLE001 - any decoding failure means the file is unusable
        raise ValueError(f"checkpoint {path} is corrupt or unreadable ({type(e).__name__}: {e})") from None

    leaves, treedef = jax.tree_util.tree_flatten_with_path(template_model)
    restored = []
    for p, leaf in leaves:
        name = _path_key(p)
        if name not in stored:
            raise ValueError(f"checkpoint {path} does not match this learner/config: it lacks {name!r}")
        value = np.asarray(stored[name])
        if value.shape != tuple(leaf.shape):
            raise ValueError(f"checkpoint {path} does not match this learner/config: {name!r} has shape "
                             f"{value.shape}, expected {tuple(leaf.shape)}")
        restored.append(value.astype(leaf.dtype))
    model = jax.tree_util.tree_unflatten(treedef, restored)
    return {"model": model, "key": key, "env_steps": env_steps, "iteration": iteration, "path": path}
