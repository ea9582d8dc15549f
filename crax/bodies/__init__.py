"""Robots. One file per body; MJCF under ``assets/``."""

from crax.bodies.ant import Ant
from crax.bodies.base import LOCOMOTION, NAVIGATION, PLANAR, Body
from crax.bodies.half_cheetah import HalfCheetah
from crax.bodies.hopper import Hopper
from crax.bodies.humanoid import Humanoid
from crax.bodies.planar import PlanarBody
from crax.bodies.point import Point
from crax.bodies.reacher import Reacher
from crax.bodies.safety_car import Car
from crax.bodies.safety_doggo import Doggo
from crax.bodies.safety_racecar import Racecar
from crax.bodies.spider import Spider
from crax.bodies.walker2d import Walker2d

BUILTIN_BODIES = (Point, HalfCheetah, Walker2d, Hopper, Humanoid, Ant, Spider, Reacher, Car, Doggo, Racecar)

__all__ = ["Ant", "BUILTIN_BODIES", "Car", "Doggo", "Racecar", "LOCOMOTION", "NAVIGATION", "PLANAR", "Body", "HalfCheetah", "Hopper", "Humanoid", "PlanarBody", "Point", "Reacher", "Spider", "Walker2d"]
