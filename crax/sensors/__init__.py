"""Sensors: lidars, compasses and proprioception."""

from crax.core.context import Context
from crax.sensors.base import Sensor
from crax.sensors.compass import Compass, Distance
from crax.sensors.lidar import CircleLidar, Lidar, NaturalLidar, pseudo_lidar
from crax.sensors.proprio import Accelerometer, Gyro, Magnetometer, Velocimeter

BUILTIN_SENSORS = (Lidar, NaturalLidar, CircleLidar, Compass, Distance, Accelerometer, Velocimeter, Gyro, Magnetometer)

__all__ = [
    "BUILTIN_SENSORS", "Accelerometer", "CircleLidar", "Compass", "Context", "Distance", "Gyro", "Lidar",
    "Magnetometer", "NaturalLidar", "Sensor", "Velocimeter", "pseudo_lidar",
]
