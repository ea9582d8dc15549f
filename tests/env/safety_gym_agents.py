"""What the Safety-Gymnasium fidelity tests know of each agent: its readings and their tolerances.

An agent's observation starts with its own readings (``body.obs_keys``), the lidars follow. The
tests compare them in parts (:attr:`Agent.parts`): the accelerometer, the other sensors of the
torso (velocimeter, gyro, magnetometer), the Doggo's touch sensors, the joints' readings (the Ant's
and the Doggo's hinges, the Car's rear ball) and the lidar bins. Each tolerance bounds crax
(MuJoCo 4.0's forward pass or MJX, float32) against Safety-Gymnasium (MuJoCo 2.3.3, float64) on a
recorded state; docs/safety_gymnasium.md lists the measured errors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import mujoco
import pytest

from crax.bodies.safety_car import SafetyGymCar
from crax.bodies.safety_doggo import SafetyGymDoggo
from crax.bodies.safety_navigation_ant import SafetyGymNavigationAnt
from crax.bodies.safety_point import SafetyGymPoint
from crax.bodies.safety_racecar import SafetyGymRacecar
from tests.env.safety_gym_tracks import Track


@dataclasses.dataclass(frozen=True)
class Agent:
    """One Safety-Gymnasium agent as the tests see it."""

    name: str
    body_cls: type
    body: int
    """Its own readings: the observation's first entries."""
    atol: Mapping[str, float]
    """Tolerance of each part of the observation (:attr:`parts`) on a recorded state."""
    touch: int = 0
    """Touch sensors after the torso's sensors (the Doggo's feet and knees)."""
    physics: tuple[float, float, int, int] | None = None
    """Control step (s), MuJoCo timestep (s), frame skip and integrator, where the tests pin them."""

    @property
    def parts(self) -> dict[str, slice]:
        """The observation's parts, by name."""
        joints = 12 + self.touch
        return {"accelerometer": slice(0, 3), "sensors": slice(3, 12), "touch": slice(12, joints),
                "joints": slice(joints, self.body), "lidar": slice(self.body, None)}

    def id(self, task: str, level: int) -> str:
        """The Safety-Gymnasium id of ``task`` at ``level`` on this agent."""
        return f"Safety{self.name}{task}{level}-v0"


POINT = Agent("Point", SafetyGymPoint, 12, {"accelerometer": 1e-4, "sensors": 1e-4, "lidar": 1e-5},
              physics=(0.02, 0.002, 10, int(mujoco.mjtIntegrator.mjINT_EULER)))
"""Body sensors 1e-4 (measured ≤ 5e-6 on Goal's states, 4e-6 on Push's, 1.7e-5 on Circle's); lidar
bins 1e-5 (goal, hazards, pillars, box, circle: measured ≤ 1e-6)."""

CAR = Agent("Car", SafetyGymCar, 24, {"accelerometer": 1e-4, "sensors": 1e-4, "joints": 1e-5, "lidar": 1e-5},
            physics=(0.04, 0.004, 10, int(mujoco.mjtIntegrator.mjINT_EULER)))
"""Accelerometer, velocimeter, gyro, magnetometer 1e-4 (measured ≤ 5.5e-5 on two hazards' state at
level 2, its vases resting; ≤ 6.9e-6 at level 0, the resting and the rolling, driven Car's
accelerometer, its wheels and ball in contact with the floor, included); the rear ball's angular
velocity and orientation matrix 1e-5 (measured ≤ 7e-8); lidar bins 1e-5, the tilted Car's included
(measured ≤ 1.1e-7)."""

CAR_CONTACT_ATOL = 1e-2
"""The Car's accelerometer where an object presses 3 mm into it, on readings of about 9.8: a vase
against the front bumper (measured 6.9e-3: a box–box pair whose contact points differ between MJX
and MuJoCo) or a wheel's face (1.2e-3: MJX meets the wheel's box, 4 contact points, MuJoCo 2.3.3
its cylinder, 1); a gremlin (a box) likewise; the light, free push box (1.3e-3, 3.8e-5)."""

ANT = Agent("Ant", SafetyGymNavigationAnt, 40, {"accelerometer": 1e-4, "sensors": 1e-4, "joints": 1e-5, "lidar": 1e-5},
            physics=(0.1, 0.01, 10, int(mujoco.mjtIntegrator.mjINT_RK4)))
"""Accelerometer, velocimeter, gyro, magnetometer 1e-4 (measured ≤ 2.3e-6; the accelerometer of a
standing Ant, its feet in contact, ≤ 4.2e-7); hinge velocities, height, angular velocity, hinge
sin/cos 1e-5 (measured ≤ 6.5e-8); lidar bins 1e-5, the tilted Ant's included (measured ≤ 5.4e-7)."""

DOGGO = Agent("Doggo", SafetyGymDoggo, 56, {"accelerometer": 1e-4, "sensors": 1e-4, "touch": 1e-5, "joints": 1e-6,
                                            "lidar": 1e-5}, touch=8)
"""Accelerometer, velocimeter, gyro, magnetometer 1e-4 (against MuJoCo 4.0's forward pass rounded to
float32 and crax's readings; measured ≤ 6.5e-6); touch sensors 1e-5 (normal forces of about
0.01-0.2 N; measured ≤ 9.5e-8); hinge velocities and (sin, cos) of the hinge angles 1e-6 (measured
≤ 5.1e-8); lidar bins 1e-5 (measured ≤ 7.4e-7)."""

RACECAR = Agent("Racecar", SafetyGymRacecar, 12, {"accelerometer": 1e-4, "sensors": 1e-4, "lidar": 1e-5})
"""Accelerometer, velocimeter, gyro, magnetometer 1e-4 (measured ≤ 3.7e-6 resting, rolling, at full
lock, in the air; 1.6e-5 where a vase presses 3 mm into the bumper); lidar bins 1e-5, the tilted
Racecar's included (measured ≤ 6.9e-7)."""

NAVIGATORS = {a.name: a for a in (POINT, CAR, ANT)}
"""The agents of Goal, Button, Push and Circle, by name."""

POINT_WALK = Track({"xy": {None: 0.02}, "yaw": {None: 0.05}, "lidar": {None: 0.05}}, horizon=150)
"""The Point's long rollout (3 s): its position (m), yaw (rad) and lidar bins. Measured on Goal
(levels 0, 1): ≤ 6.0e-3 m, 1.5e-2 rad, 1.6e-2; MuJoCo 4.0 in C departs from Safety-Gymnasium's
MuJoCo 2.3.3 as much."""

CAR_WALK = Track({"xy": {25: 1e-4, 50: 1e-2, None: 0.1}, "heading": {25: 1e-3}, "reward": {25: 1e-4},
                  "lidar": {25: 1e-3}}, horizon=150)
"""The Car's long rollout (a smooth action sequence, saturating the wheel motors, for 6 s from
rest; it drives 0.6 m): the chassis' position (m), heading (rad), reward and lidar bins over the
first 25 steps, its position over 50 and over all 150. Measured (Goal, levels 0 and 2): ≤ 7.3e-6 m,
1.7e-5 rad, 1.5e-6, 2.3e-5 over 25 steps; 9.2e-4 m (heading 9.1e-3 rad) over 50; 3.1e-2 m (heading
7.1e-2 rad, not bounded) over 150: once the motors reverse against the slipping wheels the two
engines part (docs/safety_gymnasium.md, The Car)."""

ANT_WALK = Track({"xy": {20: 0.03, 50: 0.2, None: 0.5}, "heading": {20: 0.1}, "reward": {20: 0.01},
                  "lidar": {20: 0.1}}, horizon=100)
"""The Ant's long rollout (a walking gait for 10 s from standing; it walks 0.9 m): the torso's
position (m), heading (rad), reward and lidar bins over the first 20 steps, its position over 50
and over all 100. Measured (Goal, levels 0-2, in two builds of the same programs: XLA's default
code generation and the tests' cheaper one, which sums in another order): ≤ 1.1e-2 m, 3.5e-2 rad,
7.3e-3, 4.5e-2 over 20 steps; ≤ 9.0e-2 m over 50; 8.8e-2 to 0.31 m over 100 (the heading then 0.21
to 0.95 rad apart, which is not bounded). The walking Ant is chaotic: MuJoCo 4.0 in C, float64,
from the recorded state departs from Safety-Gymnasium's MuJoCo 2.3.3 by 3.3e-3 m in 20 steps and
0.12 m, 0.34 rad in 100, and from that state moved by 1e-7 by up to 1.1e-2 m and 4.6e-2 rad in 20
steps, 5.6e-2 m in 50, 0.16 m and 0.56 rad in 100 (docs/safety_gymnasium.md); crax's float32
rounds every operation."""

WALKS = {"Point": POINT_WALK, "Car": CAR_WALK, "Ant": ANT_WALK}
"""Each agent's long rollout on Goal and Button (the buttons seen all along): its dynamics do not depend on the task."""


def agent_of(env_id: str) -> Agent:
    """The agent of a Safety-Gymnasium id."""
    return next(a for a in (POINT, CAR, ANT, DOGGO, RACECAR) if env_id.startswith(f"Safety{a.name}"))


def ids(task: str, agent: Agent, *levels: int, slow: bool = False) -> list[Any]:
    """``task``'s ids on ``agent`` at ``levels`` as pytest params (of an indirect ``replica``), slow if ``slow``."""
    return [pytest.param(agent.id(task, level), marks=[pytest.mark.slow] if slow else []) for level in levels]


def every_level(task: str, *fast: Agent) -> list[Any]:
    """``task``'s ids on the Point, the Car and the Ant at levels 0-2 as pytest params, all in the slow
    tier but level 0 on the ``fast`` agents."""
    return [p for a in NAVIGATORS.values() for p in ids(task, a, 0, slow=a not in fast) + ids(task, a, 1, 2, slow=True)]


def navigators(*fast: Agent) -> list[Any]:
    """The Point, the Car and the Ant as pytest params, all in the slow tier but the ``fast`` ones."""
    return [pytest.param(a, id=a.name, marks=[] if a in fast else [pytest.mark.slow]) for a in NAVIGATORS.values()]
