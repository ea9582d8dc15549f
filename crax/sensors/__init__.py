"""Sensors: lidars, compasses, proprioception and the camera."""

from crax.core.context import Context
from crax.sensors.base import ImageSensor, Sensor
from crax.sensors.camera import CameraSensor
from crax.sensors.compass import Compass, Distance
from crax.sensors.lidar import CircleLidar, Lidar, NaturalLidar, pseudo_lidar
from crax.sensors.proprio import Accelerometer, Gyro, Magnetometer, Velocimeter

BUILTIN_SENSORS = (Lidar, NaturalLidar, CircleLidar, Compass, Distance, Accelerometer, Velocimeter, Gyro, Magnetometer,
                  CameraSensor)

__all__ = [
    "BUILTIN_SENSORS", "Accelerometer", "CameraSensor", "CircleLidar", "Compass", "Context", "Distance", "Gyro", "ImageSensor", "Lidar",
    "Magnetometer", "NaturalLidar", "Sensor", "Velocimeter", "pseudo_lidar",
]
