"""Safety-Gymnasium-style ids (``SafetyPointGoal1-v0``) and the crax ids they stand for."""

from __future__ import annotations

import re

SAFETY_VERSIONS = ("v0", "v1")
"""The version suffixes Safety-Gymnasium registers (navigation tasks ``-v0``, velocity tasks
``-v0`` and ``-v1``). crax serves one version of each task: every accepted suffix is the same task."""


def crax_id(env_id: str) -> str:
    """The crax id of a Safety-Gymnasium-style id (``SafetyPointGoal1-v0`` -> ``PointGoal1``);
    any other string is returned unchanged.

    Raises:
      ValueError: a Safety-style id whose version suffix is not one of :data:`SAFETY_VERSIONS`.
    """
    match = re.fullmatch(r"Safety(\w+?)(?:-(v\d+))?", env_id) if isinstance(env_id, str) else None
    if not match:
        return env_id
    name, version = match.groups()
    if version is not None and version not in SAFETY_VERSIONS:
        raise ValueError(f"{env_id!r}: version {version} is not one Safety-Gymnasium registers; use "
                         f"{' or '.join(f'Safety{name}-{v}' for v in SAFETY_VERSIONS)} (the same crax task {name!r}) "
                         "or no suffix")
    return name
