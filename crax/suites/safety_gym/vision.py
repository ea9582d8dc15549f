"""Safety-Gymnasium's Vision tasks: each navigation task with the agent's ``vision`` camera added
(``SafetyPointGoal1Vision-v0``).

Safety-Gymnasium's ``{Agent}{Task}{Level}Vision`` is its state-based task with one more observation
entry, ``vision``: a 256×256 RGB image (uint8) of the agent's ``vision`` camera, and a dict
observation whose other keys are the state-based task's (the body's sensors, then the lidars), not
flattened. crax's twin is the state-based suite with a :class:`~crax.sensors.camera.CameraSensor`
under the key ``vision`` (``vision_size`` sets its square size: 256 as Safety-Gymnasium's, or the
64 that vision papers train at), so every reward, cost and timing is the state-based task's. Its
observation is crax's dict (``state`` and ``vision``); the Gymnasium faces lay it out as
Safety-Gymnasium's keys (:meth:`VisionTwin.gymnasium_spaces`).

The camera sees the scene Safety-Gymnasium's vision render draws: every geom group (its ``render``
turns them all on; crax's alpha-0 ray and collision proxies stay hidden), the objects in
Safety-Gymnasium's shapes and colours (:mod:`crax.objects.safety_zones`,
:data:`crax.core.palette.SAFETY_GYM`; those of the state-based tasks too), its floor's size
(:data:`FLOOR_SIZE`; visual only, a plane collides at any distance) and its model's extent
(:data:`EXTENT`), hence its near and far planes (``visual/map/znear`` and ``zfar``, MuJoCo's
defaults in both, are in units of the extent). crax's own extent would be several times
Safety-Gymnasium's: crax parks its mocap bodies 10 m below the floor when it compiles. The extent
is a statistic for drawing only; no physics reads it.
"""

from __future__ import annotations

from typing import Any

import mujoco

from crax.bodies.base import Body
from crax.core.params import Param, Range
from crax.sensors.camera import ALL_GROUPS, CameraSensor
from crax.sensors.lidar import Lidar
from crax.suites.safety_gym.base import VERSION, SafetyGymSuite
from crax.suites.safety_gym.button import SafetyButton
from crax.suites.safety_gym.circle import SafetyCircle
from crax.suites.safety_gym.fading import SafetyFadingEasy, SafetyFadingHard
from crax.suites.safety_gym.goal import SafetyGoal
from crax.suites.safety_gym.push import SafetyPush
from crax.suites.safety_gym.race import SafetyRace
from crax.suites.safety_gym.run import SafetyRun

VISION_KEY = "vision"
"""Safety-Gymnasium's observation key of the camera image."""

KEY_SHAPES = {"ballquat_rear": (3, 3)}
"""Safety-Gymnasium's observation keys whose entry is not a vector: the Car's rear ball's orientation matrix."""

FLOOR_SIZE = 3.5
"""Half-size of Safety-Gymnasium's floor (``FloorConf.size``) where its task does not set its own (Run and Race: 17.5)."""

EXTENT = {
    "Goal": (1.44, 2.91, 3.94), "Button": (1.69, 2.84, 3.45), "Push": (1.76, 3.01, 4.24),
    "Circle": (3.0, 9.28, 9.28), "Run": (36.0,), "Race": (10.66, 10.66, 10.66),
    "FadingEasy": (1.44, 2.91, 3.94), "FadingHard": (1.44, 2.91, 3.94),
}
"""Safety-Gymnasium's model extent (m, MuJoCo's ``stat.extent``) per task and level. It compiles its
model anew at every reset with the objects where the layout puts them, so where the layout is drawn
(Goal, Button, Push; Fading is Goal's) the extent moves from episode to episode (PointGoal1: 2.62 to
3.71 m over 20 resets): these are the medians over the first 20 resets on the Point (the Car's are
within 5 %), recorded by ``tools/safety_gymnasium/sg_vision_near.py``
(tests/data/safety_gym_vision_near.json); Circle's, Run's and Race's scenes are fixed. Its near plane
is 0.01 times this (MuJoCo's ``visual/map/znear``): 2.9 cm for Goal at level 1, 36 cm for Run."""


class VisionTwin(SafetyGymSuite):
    """What every Vision twin adds to its state-based suite: put first among a twin's bases
    (``class SafetyGoalVision(VisionTwin, SafetyGoal)``); its ``params`` are the suite's, ``vision_size`` and ``vision_period``."""

    vision_params = {"vision_size": Param(256, Range(8, 1024, integer=True),
                                          "side of the square camera image in pixels (Safety-Gymnasium's: 256)"),
                     "vision_period": Param(1, Range(1, 1000, integer=True),
                                            "render the image every this many steps, holding the last frame between "
                                            "(Safety-Gymnasium's: 1)")}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        state_based = cls.__mro__[cls.__mro__.index(VisionTwin) + 1]
        cls.name = f"{state_based.name}Vision"
        cls.params = {**state_based.params, **VisionTwin.vision_params}
        if state_based.floor_size is None:
            cls.floor_size = FLOOR_SIZE

    def __init__(self, body: Body, level: int, *, vision_size: int = 256, vision_period: int = 1, **overrides: Any):
        super().__init__(body, level, **overrides)
        self.vision_size = int(vision_size)
        self.sensors.append(CameraSensor(self.vision_size, self.vision_size, "rgb", key=VISION_KEY,
                                         period=int(vision_period), **self.camera_view()))

    def build(self, spec: mujoco.MjSpec) -> None:
        super().build(spec)
        spec.stat.extent = EXTENT[self.task][self.level]

    @staticmethod
    def camera_view() -> dict[str, Any]:
        """What a :class:`CameraSensor` on a twin is given to see what Safety-Gymnasium's vision
        camera sees: every geom group, and the near plane of the model's own extent, Safety-Gymnasium's."""
        return {"geomgroup": ALL_GROUPS, "near": None}

    @classmethod
    def served_id(cls, agent: str, level: int) -> str:
        """Safety-Gymnasium's id, e.g. ``SafetyPointGoal1Vision-v0``."""
        return f"Safety{agent}{cls.task}{level}Vision-{VERSION}"

    def observation_keys(self) -> list[tuple[str, tuple[int, ...]]]:
        """Safety-Gymnasium's keys of the state vector's parts, in order, with their shapes: the body's
        ``obs_keys``, then each lidar's ``<object>_lidar``."""
        keys = [(key, KEY_SHAPES.get(key, (size,))) for key, size in self.body.obs_keys]
        for sensor in self.sensors:
            if isinstance(sensor, Lidar):
                keys.append((f"{sensor.target}_lidar", (sensor.size,)))
        return keys

    def gymnasium_spaces(self) -> dict[str, Any]:
        """The state-based task's spaces, and the observation's layout as Safety-Gymnasium's dict
        (``observation_keys``: the state vector's parts by key and shape, :meth:`observation_keys`)."""
        return {**super().gymnasium_spaces(), "observation_keys": self.observation_keys()}


class SafetyGoalVision(VisionTwin, SafetyGoal):
    """Safety-Gymnasium's Goal Vision tasks."""


class SafetyButtonVision(VisionTwin, SafetyButton):
    """Safety-Gymnasium's Button Vision tasks."""


class SafetyPushVision(VisionTwin, SafetyPush):
    """Safety-Gymnasium's Push Vision tasks."""


class SafetyCircleVision(VisionTwin, SafetyCircle):
    """Safety-Gymnasium's Circle Vision tasks."""


class SafetyRunVision(VisionTwin, SafetyRun):
    """Safety-Gymnasium's Run Vision task."""


class SafetyRaceVision(VisionTwin, SafetyRace):
    """Safety-Gymnasium's Race Vision tasks."""


class SafetyFadingEasyVision(VisionTwin, SafetyFadingEasy):
    """Safety-Gymnasium's FadingEasy Vision tasks."""


class SafetyFadingHardVision(VisionTwin, SafetyFadingHard):
    """Safety-Gymnasium's FadingHard Vision tasks."""


VISION_SUITES: tuple[type[SafetyGymSuite], ...] = (
    SafetyGoalVision, SafetyButtonVision, SafetyPushVision, SafetyCircleVision, SafetyRunVision, SafetyRaceVision,
    SafetyFadingEasyVision, SafetyFadingHardVision)
"""The Vision twins, one per state-based navigation task."""
