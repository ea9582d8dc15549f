"""Fixed collidable boxes of the world body: Safety-Gymnasium's static geoms (its Race task's walls)."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
from flax import nnx

from crax.core.scene import GROUP_WALL, Category, collide_as

STATIC_RGBA = (0.55, 0.5, 0.4, 1.0)
"""Colour of the boxes in renders (Safety-Gymnasium draws textured meshes; crax draws the boxes)."""


@dataclasses.dataclass(frozen=True)
class StaticBox:
    """One upright box: centre ``(x, y)``, half-sizes ``(hx, hy)`` across the floor turned by ``yaw``
    about the vertical, standing from the floor to ``top``."""

    name: str
    x: float
    y: float
    hx: float
    hy: float
    yaw: float
    top: float

    def moved(self, dx: float = 0.0, dy: float = 0.0) -> StaticBox:
        return dataclasses.replace(self, x=self.x + dx, y=self.y + dy)


class StaticGeoms(nnx.Module):
    """Boxes fixed in the world: they never move, collide with the agent (and props) in the ``WALL``
    category with Safety-Gymnasium's contact (condim 6, MuJoCo's default friction), and are
    observed by no lidar. Their geoms are named as the boxes; :attr:`geom_ids` holds their ids once
    bound, so a contact cost (:class:`crax.costs.agent_contacts.AgentContacts`) counts touches.

    Args:
      boxes: the boxes, in Safety-Gymnasium's order.
    """

    name = "StaticGeoms"

    def __init__(self, boxes: tuple[StaticBox, ...]):
        self.boxes = tuple(boxes)

    @property
    def count(self) -> int:
        return len(self.boxes)

    def build(self, spec: mujoco.MjSpec) -> None:
        for b in self.boxes:
            g = spec.worldbody.add_geom(
                name=b.name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[b.hx, b.hy, b.top / 2], pos=[b.x, b.y, b.top / 2],
                quat=[np.cos(b.yaw / 2), 0.0, 0.0, np.sin(b.yaw / 2)], group=GROUP_WALL, rgba=list(STATIC_RGBA),
                condim=6,
            )
            collide_as(g, Category.WALL)

    def bind(self, m: mujoco.MjModel) -> None:
        self.geom_ids = tuple(int(m.geom(b.name).id) for b in self.boxes)
