"""Files written whole or not at all, and JSON records written and read (with an error naming the file).

Every file crax writes whole (run configs, checkpoints, results, sweep manifests and tables, the
metrics record cut back on resume) goes through :func:`atomic_write_bytes`, so a crash or a full
disk never leaves half a file under a real name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a fsynced temporary file and ``os.replace``. On failure (a
    full disk) the temporary file is removed and ``path`` is left as it was."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, value: Any, *, indent: int | None = 2) -> None:
    """Writes ``value`` as JSON text and a newline to ``path`` through :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, (json.dumps(value, indent=indent) + "\n").encode())


def read_json(path: str | os.PathLike, what: str) -> Any:
    """The JSON value in ``path``; ValueError naming the file, ``what`` it should be (e.g. "a crax sweep
    manifest") and what is wrong, for a file that is unreadable, not UTF-8 text or not JSON."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        problem = f"it holds bytes that are not UTF-8 text ({e.reason} at byte {e.start})"
    except json.JSONDecodeError as e:
        problem = f"it is not valid JSON ({e})"
    except OSError as e:
        problem = f"it cannot be read ({e.strerror or e})"
    raise ValueError(f"{path} is not {what}: {problem}")
