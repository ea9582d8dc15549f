"""What Safety-Gymnasium 1.0.0's bodies share (:class:`SafetyGymBody`) and what its navigation agents
add to it (:class:`SafetyGymNavigation`)."""

from __future__ import annotations

from typing import ClassVar

import mujoco

from crax.bodies.base import SAFETY_GYM, SAFETY_GYM_SOLVER, Body
from crax.bodies.safety_imu import IMU_KEYS, field_options
from crax.core.scene import floor_only


class SafetyGymBody(Body):
    """A body built to Safety-Gymnasium 1.0.0's definitions, for its tasks (:mod:`crax.suites.safety_gym`).

    Its kind is :data:`~crax.bodies.base.SAFETY_GYM` only (the paper's suites do not accept it; a
    subclass that the paper's suites run sets its own kinds), and MJX solves its scenes with the
    budget :data:`~crax.bodies.base.SAFETY_GYM_SOLVER`.

    Class attributes (besides :class:`~crax.bodies.base.Body`'s):
      agent: Safety-Gymnasium's name for the agent, as its ids spell it (``Point`` in
        ``SafetyPointGoal1-v0``, ``Hopper`` in ``SafetyHopperVelocity-v1``).
    """

    kinds = frozenset({SAFETY_GYM})
    agent: ClassVar[str]
    solver_iterations, ls_iterations = SAFETY_GYM_SOLVER


class SafetyGymNavigation(SafetyGymBody):
    """An agent of Safety-Gymnasium's navigation tasks (``bases/base_agent.py``): Point, Car, Doggo, Ant, Racecar.

    Safety-Gymnasium steps each 10 substeps per control step (``sim_conf.frameskip_binom_n``) and
    starts it at rest without joint noise (the Ant draws its own, ``Ant.reset``). :meth:`bind`
    keeps the model's gravity and magnetic field (``gravity``, ``magnetic``), which the agents'
    accelerometers and magnetometers read (:mod:`crax.bodies.safety_imu`). Its observation starts
    with those four readings (:data:`~crax.bodies.safety_imu.IMU_KEYS`), its ``obs_keys`` being
    Safety-Gymnasium's keys in its flattened order: the Point and the Racecar have no others.

    Class attributes (besides :class:`SafetyGymBody`'s):
      cylinders: the agent's cylinder geoms, which touch the floor only, and ``proxies``: the
        massless shapes around them that take their contacts with objects (MJX has no
        box–cylinder collision: :func:`crax.core.scene.floor_only`).
    """

    frame_skip = 10
    reset_noise = 0.0
    obs_keys = IMU_KEYS
    cylinders: ClassVar[tuple[str, ...]] = ()
    proxies: ClassVar[tuple[str, ...]] = ()

    def mjcf(self) -> mujoco.MjSpec:
        """The body's MJCF, its :attr:`cylinders` touching the floor only and their proxies the objects only."""
        spec = super().mjcf()
        floor_only(spec, self.cylinders, self.proxies)
        return spec

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.gravity, self.magnetic = field_options(m)
