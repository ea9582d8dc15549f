"""Collidable hazards that block motion: cylinder and cube pillars (contact-cost hazards)."""

from __future__ import annotations

import mujoco

from crax.core import palette
from crax.core.scene import Category, collide_as
from crax.objects.base import Placeable

FRICTIONLESS = {"condim": 1, "priority": 1}
"""Pillar contacts are frictionless (condim 1, which wins over the agent's 3 by priority): one
solver row per contact instead of four, the largest part of a pillar's physics cost in MJX."""


class Pillars(Placeable):
    """``count`` solid pillars of ``height`` standing on the floor: collidable hazards, the agent's
    contacts with them cost. ``keepout`` defaults to their footprint's radius plus 0.1 m."""

    collidable = True
    rgba = palette.PILLAR

    def __init__(self, count: int, height: float, *, footprint: float, keepout: float | None = None):
        self.count = count
        self.height = height
        self.keepout = footprint + 0.1 if keepout is None else keepout
        self.z = height / 2


class CylinderPillars(Pillars):
    """Solid cylinders of ``radius`` and ``height`` standing on the floor.

    They collide as vertical capsules of the same radius whose straight part spans the pillar's
    height (:meth:`collision_proxy`): the same solid for anything below the top, plus a dome of
    height ``radius`` above it. MJX computes sphere– and capsule–cylinder contacts by an SDF
    optimisation (10 gradient steps of 10 line-search points per pair and substep) and
    sphere/capsule–capsule contacts in closed form, so capsules make the pillar scenes' physics several
    times cheaper (docs/DECISIONS.md, decision 39, has the measurements). The visible cylinder does not
    collide.
    """

    name = "CylinderPillars"

    def __init__(self, count: int, radius: float, height: float, *, keepout: float | None = None):
        super().__init__(count, height, footprint=radius, keepout=keepout)
        self.radius = radius

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, self.height / 2, 0], **FRICTIONLESS}

    def collision_proxy(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CAPSULE, "size": [self.radius, self.height / 2, 0], **FRICTIONLESS}

    def ray_proxy(self) -> dict:
        return {
            "type": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
            "size": [self.radius, self.radius, self.height / 2],
            "pos": [0.0, 0.0, 0.005 - self.height / 2],
        }


class CubePillars(Pillars):
    """Solid axis-aligned boxes of half-size ``half`` and ``height`` standing on the floor."""

    name = "CubePillars"

    def __init__(self, count: int, half: float, height: float, *, keepout: float | None = None):
        super().__init__(count, height, footprint=half * 2**0.5, keepout=keepout)
        self.half = half

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": [self.half, self.half, self.height / 2], **FRICTIONLESS}


class SafetyGymPillars(CylinderPillars):
    """Safety-Gymnasium 1.0.0's pillars (``assets/geoms/pillars.py``): cylinders of ``radius`` and
    ``height`` whose contacts have condim 6 and MuJoCo's default friction, as every geom of its
    scene has (not :data:`FRICTIONLESS`). They collide through the same capsule proxy as
    :class:`CylinderPillars` (MJX has no box–cylinder contact; the Point's front box and the push
    box are boxes). Safety-Gymnasium's pillars stop everything, props included (its push box), so
    their colliders are in the ``WALL`` collision category, which touches agents and props. They
    are drawn in Safety-Gymnasium's colour (:data:`~crax.core.palette.SAFETY_GYM`)."""

    name = "SafetyGymPillars"
    rgba = palette.SAFETY_GYM["pillar"]

    def build(self, spec: mujoco.MjSpec, label: str) -> None:
        super().build(spec, label)
        for i in range(self.count):
            collide_as(spec.geom(f"{label}/{i}/collision"), Category.WALL)

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [self.radius, self.height / 2, 0]}

    def collision_proxy(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_CAPSULE, "size": [self.radius, self.height / 2, 0], "condim": 6}
