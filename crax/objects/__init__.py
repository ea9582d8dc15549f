"""Placeable objects: hazards, goals, buttons, the block; where they go (:func:`sample_layout`).

Their costs are constraint terms in :mod:`crax.costs`. Plugins register placeables under the kind
``hazards`` (``crax_hazards`` hook).
"""

from crax.objects.base import Placeable
from crax.objects.block import Block
from crax.objects.buttons import Buttons, Gremlins
from crax.objects.mixed_zones import MixedZones
from crax.objects.pathway import PathwayZones
from crax.objects.pillars import CubePillars, CylinderPillars
from crax.objects.placement import sample_layout
from crax.objects.walls import wall_points
from crax.objects.zones import CubeZones, CylinderZones, GoalZone

BUILTIN_HAZARDS = (
    CylinderZones, CubeZones, CylinderPillars, CubePillars, GoalZone, PathwayZones, MixedZones, Buttons, Gremlins,
    Block,
)

__all__ = [
    "BUILTIN_HAZARDS", "Block", "Buttons", "CubePillars", "CubeZones", "CylinderPillars", "CylinderZones", "GoalZone",
    "Gremlins", "MixedZones", "PathwayZones", "Placeable", "sample_layout", "wall_points",
]
