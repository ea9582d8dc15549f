"""Robots. One file per body; MJCF under ``assets/``."""

from crax.bodies.base import LOCOMOTION, NAVIGATION, PLANAR, Body
from crax.bodies.half_cheetah import HalfCheetah
from crax.bodies.point import Point

BUILTIN_BODIES = (Point, HalfCheetah)

__all__ = ["BUILTIN_BODIES", "LOCOMOTION", "NAVIGATION", "PLANAR", "Body", "HalfCheetah", "Point"]
