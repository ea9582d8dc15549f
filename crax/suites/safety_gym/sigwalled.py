"""`SigwalledSuite`: Safety-Gymnasium's tasks of the agent alone among sigwalls (Circle, Run)."""

from __future__ import annotations

import types
from typing import Any

from crax.bodies.base import Body
from crax.core.params import NON_NEGATIVE, Param
from crax.costs.bounds import OutOfBounds
from crax.objects.sigwalls import Sigwalls
from crax.suites.safety_gym.base import SafetyGymSuite

BOUNDARY_COST = Param(1.0, NON_NEGATIVE, "raw cost of a step beyond a sigwall, cost_out_of_boundary")
"""The parameter ``boundary_cost`` of every sigwalled task."""


class SigwalledSuite(SafetyGymSuite):
    """A Safety-Gymnasium task with no objects: the agent alone in ``±extent`` among
    :class:`~crax.objects.sigwalls.Sigwalls`, which it passes through; a step that ends beyond one
    costs ``boundary_cost`` (``cost/out_of_boundary``; no cost term where there are no sigwalls, as
    in Safety-Gymnasium). Its episodes are 500 steps. Subclasses call :meth:`_setup_sigwalls` and
    build the sigwalls (``self.sigwalls``) into the scene."""

    agent_keepout = 0.0
    episode_length = 500

    def _setup_sigwalls(self, body: Body, level: int, values: Any, *, extent: float, sigwalls: Sigwalls) -> None:
        """Stores the configuration (:meth:`_setup_objects` with no objects and no lidar) and
        ``sigwalls``, with their cost term (``values.boundary_cost``)."""
        # the agent is the only thing placed: any one draw fits (keepout 0), so one candidate
        self._setup_objects(body, level, {}, types.SimpleNamespace(**vars(values), num_candidates=1),
                            extent=extent, lidar=())
        self.sigwalls = sigwalls
        if sigwalls.count:
            self.constraints.append(OutOfBounds(sigwalls.x_bound, sigwalls.y_bound,
                                                boundary_cost=values.boundary_cost, term="out_of_boundary"))
