"""How far a rollout stepped in crax may depart from the one Safety-Gymnasium recorded: :class:`Track`
bounds, per quantity and horizon, and :func:`assert_track` holds a rollout to them."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class Track:
    """How far a rollout may depart from the recorded one: for each quantity (:data:`DEPARTURES`) the
    largest departure over the first n steps (``None``: all), and the recorded rollout's length
    where it is fixed."""

    bounds: Mapping[str, Mapping[int | None, float]]
    horizon: int | None = None


def _recorded(steps: list[dict[str, Any]], key: str) -> np.ndarray:
    """``key`` of the recorded steps that hold it: all, or the first few (some records keep the
    observation for the steps their bounds compare only)."""
    return np.asarray([s[key] for s in itertools.takewhile(lambda s: key in s, steps)])


def _lidar(out: dict[str, np.ndarray], steps: list[dict[str, Any]], body: int) -> np.ndarray:
    ref = _recorded(steps, "obs")
    return np.abs(out["obs"][: len(ref), body:] - ref[:, body:]).max(-1)


DEPARTURES: dict[str, Callable[[dict[str, np.ndarray], list[dict[str, Any]], int], np.ndarray]] = {
    "xy": lambda out, steps, body: np.linalg.norm(out["xy"] - _recorded(steps, "xy"), axis=-1),
    "heading": lambda out, steps, body: np.abs(np.angle(np.exp(1j * (out["heading"] - _recorded(steps, "yaw"))))),
    "yaw": lambda out, steps, body: np.abs(out["yaw"] - _recorded(steps, "yaw")),
    "reward": lambda out, steps, body: np.abs(out["reward"] - _recorded(steps, "reward")),
    "return": lambda out, steps, body: np.abs(np.cumsum(out["reward"]) - np.cumsum(_recorded(steps, "reward"))),
    "lidar": _lidar,
    "box": lambda out, steps, body: np.linalg.norm(out["box"][:, :2] - _recorded(steps, "box_pos")[:, :2], axis=-1),
}
"""Per step: the agent's planar position (m), the torso's heading (rad, wrapped), the Point's yaw
(its hinge, rad), the reward, the return so far, the largest lidar bin's, the push box's planar
position (m)."""


def assert_track(out: dict[str, np.ndarray], steps: list[dict[str, Any]], track: Track, body: int) -> None:
    """A rollout (:meth:`Replica.rollout`) within ``track`` of the recorded ``steps``, as long, never
    ending, and costing exactly as recorded at every step; ``body``: the agent's readings (the lidar after)."""
    assert len(out["reward"]) == len(steps) and not out["done"].any()
    assert track.horizon is None or len(steps) == track.horizon
    for quantity, windows in track.bounds.items():
        departure = DEPARTURES[quantity](out, steps, body)
        for n, bound in windows.items():
            assert len(departure) >= (len(steps) if n is None else n), (quantity, n)  # the record covers it
            assert departure[:n].max() < bound, (quantity, n, departure[:n].max())
    np.testing.assert_array_equal(out["cost"], _recorded(steps, "cost"))
