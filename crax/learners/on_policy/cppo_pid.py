"""CPPO-PID: OmniSafe's name and defaults for PPO with the PID Lagrangian (crax's ``ppo-pid`` with
CPPOPID.yaml's clip and entropy; the controller is the same)."""

from __future__ import annotations

import dataclasses

from crax.learners.on_policy.omnisafe_defaults import OmniSafePPOConfig
from crax.learners.on_policy.ppo_pid import PPOPID
from crax.learners.rules import PIDFields


@dataclasses.dataclass(frozen=True)
class CPPOPIDConfig(PIDFields, OmniSafePPOConfig):
    """CPPO-PID hyperparameters: OmniSafe's PPO defaults (:class:`OmniSafePPOConfig`) plus the PID
    controller's (:class:`PIDFields`: CPPOPID.yaml's ``lagrange_cfgs``)."""


class CPPOPID(PPOPID, name="cppo-pid", config=CPPOPIDConfig):
    """``ppo-pid``'s hooks (clip surrogate on (Â_r − λ Â_c)/(1 + λ), λ by the PID Lagrangian) with
    OmniSafe's CPPOPID.yaml defaults."""

