"""Sensors: lidars, compasses and proprioception."""

from crax.sensors.base import Context, Sensor
from crax.sensors.compass import Compass
from crax.sensors.lidar import Lidar, NaturalLidar, pseudo_lidar
from crax.sensors.proprio import Accelerometer, Gyro, Magnetometer, Velocimeter

BUILTIN_SENSORS = (Lidar, NaturalLidar, Compass, Accelerometer, Velocimeter, Gyro, Magnetometer)

__all__ = [
    "BUILTIN_SENSORS", "Accelerometer", "Compass", "Context", "Gyro", "Lidar", "Magnetometer",
    "NaturalLidar", "Sensor", "Velocimeter", "pseudo_lidar",
]
