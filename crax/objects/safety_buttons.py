"""Safety-Gymnasium's buttons: fixed spheres on the floor that the agent presses by touching them."""

from __future__ import annotations

import mujoco

from crax.core import palette
from crax.core.scene import GROUP_GOAL
from crax.objects.base import Placeable


class SafetyGymButtons(Placeable):
    """``count`` spheres of radius ``size`` resting on the floor (Safety-Gymnasium 1.0.0's ``Buttons``).

    Each is a mocap body ``<label>/<i>`` (moved at reset; nothing moves it during an episode) with
    one sphere geom of Safety-Gymnasium's contact parameters: condim 6 and MuJoCo's default
    friction, so pushing against a button is what it is there. It collides with the agent only
    (the hazard category); Safety-Gymnasium's buttons also collide with its gremlins, which the
    layout's keepouts keep out of their reach. Which button is the goal, and what touching one
    does, is the suite's (:class:`crax.suites.safety_gym.button.SafetyButton`).

    Args:
      count: number of buttons.
      size: radius (m); the centre is at that height.
      keepout: placement clearance radius.
    """

    name = "SafetyGymButtons"
    collidable = True
    group = GROUP_GOAL
    rgba = palette.SAFETY_GYM["button"]

    def __init__(self, count: int = 4, *, size: float = 0.1, keepout: float = 0.2):
        self.count = count
        self.size = size
        self.keepout = keepout
        self.z = size

    def geom(self) -> dict:
        return {"type": mujoco.mjtGeom.mjGEOM_SPHERE, "size": [self.size, 0, 0], "condim": 6}
