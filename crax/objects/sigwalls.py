"""Safety-Gymnasium's sigwalls: marks of the boundary its Circle task asks the agent to stay within."""

from __future__ import annotations

import mujoco
import numpy as np
from flax import nnx

from crax.core.scene import no_collision

SIGWALL_RGBA = (1.0, 1.0, 0.0, 0.1)
"""Safety-Gymnasium's sigwall colour at its alpha (yellow, nearly transparent)."""


class Sigwalls(nnx.Module):
    """Safety-Gymnasium 1.0.0's ``Sigwalls`` (``assets/geoms/sigwalls.py``): thin upright boxes
    at ``x = ±x_bound`` and, where ``y_bound`` is given, ``y = ±y_bound``.

    They are signs, not walls: nothing collides with them (contype and conaffinity 0) and no lidar
    observes them, so the agent passes through. Crossing one is what costs, a term of the
    agent's position (:class:`crax.costs.bounds.OutOfBounds` with these bounds), as
    Safety-Gymnasium's ``cost_out_of_boundary``. Each box has Safety-Gymnasium's half-size
    ``(0.05, half_length, 0.3)``, centred 0.25 m up.

    Args:
      x_bound: distance of the two walls across x from the origin (m); None: none.
      y_bound: distance of the two walls across y (m); None: none.
      half_length: half the length of each wall (m; Safety-Gymnasium's ``size``: Circle 3.5, Run 17.5).
    """

    name = "Sigwalls"
    z = 0.25

    def __init__(self, x_bound: float | None, y_bound: float | None = None, *, half_length: float = 3.5):
        inf = float("inf")
        self.x_bound = None if x_bound is None or x_bound == inf else float(x_bound)
        self.y_bound = None if y_bound is None or y_bound == inf else float(y_bound)
        self.half_size = (0.05, float(half_length), 0.3)

    @property
    def count(self) -> int:
        """Number of walls: 0, 2 or 4."""
        return 2 * ((self.x_bound is not None) + (self.y_bound is not None))

    def build(self, spec: mujoco.MjSpec) -> None:
        """Adds the walls, visual only, as geoms ``sigwall<i>`` of the world body (Safety-Gymnasium's order)."""
        turn = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]  # the y walls: the box turned a quarter about z
        placed = [([x, 0.0], [1.0, 0.0, 0.0, 0.0]) for x in self._pair(self.x_bound)]
        placed += [([0.0, y], turn) for y in self._pair(self.y_bound)]
        for i, (xy, quat) in enumerate(placed):
            g = spec.worldbody.add_geom(name=f"sigwall{i}", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(self.half_size),
                                        pos=[*xy, self.z], quat=quat, rgba=list(SIGWALL_RGBA))
            no_collision(g)  # group 0: no crax lidar casts against it

    @staticmethod
    def _pair(bound: float | None) -> tuple[float, ...]:
        return () if bound is None else (bound, -bound)
